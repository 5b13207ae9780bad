import type Router from "@koa/router";

/** One route the server answers: its pattern (`/v1/models/:id`), its methods, and whether it needs no key. */
export type RouteInfo = {
    path: string;
    methods: readonly string[];
    public: boolean;
};

/** The routes a router answers (its `use` middleware left out: they have no methods). */
export function routeTableOf(router: Router, isPublic: boolean): RouteInfo[] {
    return router.stack
        .filter((layer) => layer.methods.length > 0)
        .map((layer) => ({path: String(layer.path), methods: [...layer.methods], public: isPublic}));
}
