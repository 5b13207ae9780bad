import type Router from "@koa/router";

/**
 * One route the server answers: its pattern (`/v1/models/:id`), its methods, whether it needs no key, and whether it
 * is an administrator's (the management API: a user's key gets a 403).
 */
export type RouteInfo = {
    path: string;
    methods: readonly string[];
    public: boolean;
    admin: boolean;
};

/** The routes a router answers (its `use` middleware left out: they have no methods). */
export function routeTableOf(router: Router, access: "public" | "key" | "admin"): RouteInfo[] {
    return router.stack
        .filter((layer) => layer.methods.length > 0)
        .map((layer) => ({path: String(layer.path), methods: [...layer.methods], public: access === "public", admin: access === "admin"}));
}
