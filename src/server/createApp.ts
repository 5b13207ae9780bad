import type { PlaygroundFiles } from "./playground/PlaygroundFiles.js";
import { playgroundRoutes } from "./playground/playgroundRoutes.js";
import Koa, { type Context } from "koa";
import Router from "@koa/router";
import type { ApiKeyStore } from "../auth/ApiKeyStore.js";
import type { Capability } from "../capabilities/Capability.js";
import type { Config } from "../config.js";
import type { HealthDetailsSetting } from "../settings/serverSettings.js";
import type { EngineHost } from "../core/engines/EngineHost.js";
import type { RequestState } from "../core/http/RequestState.js";
import type { BodyMemory } from "../core/http/BodyMemory.js";
import { jsonBody } from "../core/http/jsonBody.js";
import { multipartBody, type MultipartLimits } from "../core/http/multipartBody.js";
import { toApiError } from "./toApiError.js";
import type { Logger } from "../logger.js";
import { authMiddleware } from "./authMiddleware.js";
import { corsMiddleware } from "./corsMiddleware.js";
import { crossSiteMiddleware } from "./crossSiteMiddleware.js";
import { errorMiddleware } from "./errorMiddleware.js";
import { healthHandler } from "./healthHandler.js";
import { readyHandler } from "./readyHandler.js";
import { hostCheckMiddleware, hostnameOf } from "./hostCheckMiddleware.js";
import { isLoopbackHost } from "./isLoopbackHost.js";
import type { ServerMetrics } from "./metrics/ServerMetrics.js";
import { metricsHandler } from "./metricsHandler.js";
import { libraryListHandler, loadModelHandler, unloadModelHandler } from "./modelAdminHandlers.js";
import { listModelsHandler, retrieveModelHandler } from "./modelsHandlers.js";
import { pullModelHandler, type ModelPuller } from "./pullModelHandler.js";
import { requestContext } from "./requestContext.js";
import { routeTableOf, type RouteInfo } from "./routeTableOf.js";

export type AppDeps = {
    /** The settings, for the capabilities' routes (RouteContext.config). */
    config: Config;
    capabilities: readonly Capability[];
    engines: EngineHost;
    keys: ApiKeyStore;
    logger: Logger;
    bodyLimit: string;
    /** The bytes request bodies hold while they arrive, and their cap (Config.maxBodyMemory). */
    bodyMemory: BodyMemory;
    ssePingMs: number;
    /** Aborts every in-flight request (shutdown). */
    shutdownSignal: AbortSignal;
    /** Aborted when a graceful shutdown begins: /health/ready turns 503 while requests are still served. */
    drainSignal: AbortSignal;
    /** Requests that may wait per model (Config.queueSize): a model with that many waiting is full. */
    queueSize: number;
    metrics: ServerMetrics;
    /** See Config: corsOrigins, allowedHosts, metricsPublic. */
    corsOrigins: readonly string[];
    allowedHosts: readonly string[];
    metricsPublic: boolean;
    healthDetails: HealthDetailsSetting;
    /** Base URL of links handed out (image URLs), or null: a loopback/allowed Host, else `serverUrl()`. */
    publicUrl: string | null;
    /** The address the server listens on (known once it listens). */
    serverUrl: () => string;
    /** The playground page's files, or null when it is off (`--ui`). */
    playground?: PlaygroundFiles | null;
    /** Pulls models from the hub for POST /models/pull (the downloader); absent: the route is not served. */
    pullModels?: ModelPuller;
};

export type App = {
    koa: Koa;
    /** Every route the server answers, whether it needs no key, and whether it is an administrator's (the security tests walk it). */
    routes: readonly RouteInfo[];
};

/**
 * The Koa app and its one route table: the server's own routes here, each capability's from its
 * folder. Everything it needs is passed in, so tests can build it with fakes.
 *
 * Authorization is decided on the route that matched, never on the raw path: the key check is the
 * first middleware of every protected route, so it runs for whatever spelling the router accepts
 * (case, trailing slash, HEAD). Routes are protected unless registered on `publicRouter`, and a
 * request that matches no route at all needs a key too (an unknown path tells an unauthenticated
 * caller nothing). The management routes (`adminRouter`: load, unload, pull) check the key's role the same way: a
 * user's key gets a 403 on them, whatever the spelling. Cross-site requests (a web page the server does not allow) are refused before any
 * route runs, keys or not (crossSiteMiddleware).
 */
export function createApp(deps: AppDeps): App {
    const koa = new Koa();
    koa.proxy = false;
    // Errors are logged by errorMiddleware; Koa's default handler would print them again.
    koa.silent = true;
    const auth = authMiddleware(deps.keys);

    // The only routes that answer without a key.
    const publicRouter = new Router();
    publicRouter.get("/health", healthHandler(deps.engines, deps.keys, deps.healthDetails));
    // Probes for balancers and orchestrators (docs/deployment.md): the process answers; it should get work.
    publicRouter.get("/health/live", (ctx) => {
        ctx.set("Cache-Control", "no-store");
        ctx.body = {status: "alive"};
    });
    publicRouter.get("/health/ready", readyHandler(deps.engines, deps.queueSize, deps.drainSignal));
    if (deps.metricsPublic)
        publicRouter.get("/metrics", metricsHandler(deps.metrics));
    if (deps.playground != null)
        playgroundRoutes(publicRouter, deps.playground);

    const protectedRoot = new Router();
    if (!deps.metricsPublic)
        protectedRoot.get("/metrics", metricsHandler(deps.metrics));
    // The model library's management API, in llama-server's router-mode shapes (docs/models.md): anyone with a key lists...
    protectedRoot.get("/models", libraryListHandler(deps.engines));
    // ...an administrator loads, unloads and pulls.
    const adminRouter = new Router();
    const modelsBody = jsonBody(deps.bodyLimit, deps.bodyMemory);
    adminRouter.post("/models/load", modelsBody, loadModelHandler(deps.engines));
    adminRouter.post("/models/unload", modelsBody, unloadModelHandler(deps.engines));
    if (deps.pullModels != null)
        adminRouter.post("/models/pull", modelsBody, pullModelHandler(deps.engines, deps.pullModels, deps.ssePingMs));

    const v1 = new Router({prefix: "/v1"});
    v1.get("/models", listModelsHandler(deps.engines));
    v1.get("/models/:id", retrieveModelHandler(deps.engines));
    const linkBase = (ctx: Context) => deps.publicUrl
        ?? (isLoopbackHost(hostnameOf(ctx.get("Host"))) || deps.allowedHosts.includes(hostnameOf(ctx.get("Host"))) ? `${ctx.protocol}://${ctx.host}` : deps.serverUrl());
    const routeContext = {config: deps.config, engines: deps.engines, logger: deps.logger, ssePingMs: deps.ssePingMs, jsonBody: jsonBody(deps.bodyLimit, deps.bodyMemory),
        jsonBodyWithin: (bounds: {maxValues: number, maxItems?: Readonly<Record<string, number>>, maxFieldValues?: Readonly<Record<string, number>>}) => jsonBody(deps.bodyLimit, deps.bodyMemory, bounds),
        multipartBody: (limits: MultipartLimits) => multipartBody(limits, deps.bodyMemory), publicRouter, rootRouter: protectedRoot, linkBase};
    for (const capability of deps.capabilities)
        capability.routes(v1, routeContext);

    // The key check as the first middleware of each protected route itself: whatever spelling matched the route runs it.
    for (const router of [protectedRoot, v1])
        for (const layer of router.stack)
            if (layer.methods.length > 0)
                layer.stack.unshift(auth);
    const adminAuth = authMiddleware(deps.keys, "admin");
    for (const layer of adminRouter.stack)
        if (layer.methods.length > 0)
            layer.stack.unshift(adminAuth);

    const capabilityMappers = deps.capabilities.flatMap((capability) => capability.toApiError ?? []);
    // CORS first: preflights are answered before auth, and every answer (errors too) carries its headers.
    koa.use(corsMiddleware(deps.corsOrigins));
    koa.use(requestContext(deps.logger, deps.shutdownSignal, (error) => toApiError(error, capabilityMappers), deps.metrics));
    // The models a request resolves stay held (never evicted) until it ends.
    koa.use((ctx, next) => deps.engines.withRequest((ctx.state as RequestState).signal, next));
    koa.use(errorMiddleware(deps.logger, Object.assign({}, ...deps.capabilities.map((capability) => capability.errorShapes ?? {}))));
    koa.use(hostCheckMiddleware(deps.keys, deps.allowedHosts));
    // Before any route (so before any body is read), whatever route would match: a web page the server does not allow runs nothing.
    koa.use(crossSiteMiddleware(deps.corsOrigins, deps.publicUrl));
    koa.use(publicRouter.routes());
    koa.use(protectedRoot.routes());
    koa.use(adminRouter.routes());
    koa.use(v1.routes());
    // Nothing matched: a key is needed to learn even that (a public path with another method is the exception: its 405 is public).
    koa.use((ctx, next) => publicRouter.match(ctx.path, ctx.method).path.length > 0 ? next() : auth(ctx, next));
    // Not `throw: true`: in that mode the router does not set `Allow`; errorMiddleware shapes the 405.
    koa.use(publicRouter.allowedMethods());
    koa.use(protectedRoot.allowedMethods());
    koa.use(adminRouter.allowedMethods());
    koa.use(v1.allowedMethods());
    return {
        koa,
        routes: [...routeTableOf(publicRouter, "public"), ...routeTableOf(protectedRoot, "key"), ...routeTableOf(adminRouter, "admin"), ...routeTableOf(v1, "key")]
    };
}
