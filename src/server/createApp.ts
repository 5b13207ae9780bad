import Koa from "koa";
import Router from "@koa/router";
import type { ApiKeyStore } from "../auth/ApiKeyStore.js";
import type { Capability } from "../capabilities/Capability.js";
import type { EngineHost } from "../core/engines/EngineHost.js";
import { jsonBody } from "../core/http/jsonBody.js";
import { toApiError } from "../core/http/toApiError.js";
import type { Logger } from "../logger.js";
import { authMiddleware } from "./authMiddleware.js";
import { corsMiddleware } from "./corsMiddleware.js";
import { errorMiddleware } from "./errorMiddleware.js";
import { healthHandler } from "./healthHandler.js";
import { hostCheckMiddleware } from "./hostCheckMiddleware.js";
import type { ServerMetrics } from "./metrics/ServerMetrics.js";
import { metricsHandler } from "./metricsHandler.js";
import { listModelsHandler, retrieveModelHandler } from "./modelsHandlers.js";
import { requestContext } from "./requestContext.js";

export type AppDeps = {
    capabilities: readonly Capability[];
    engines: EngineHost;
    keys: ApiKeyStore;
    logger: Logger;
    bodyLimit: string;
    ssePingMs: number;
    /** Aborts every in-flight request (shutdown). */
    shutdownSignal: AbortSignal;
    metrics: ServerMetrics;
    /** See Config: corsOrigins, allowedHosts, metricsPublic. */
    corsOrigins: readonly string[];
    allowedHosts: readonly string[];
    metricsPublic: boolean;
};

/**
 * The Koa app and its one route table: the server's own routes here, each capability's from its
 * folder. Everything it needs is passed in, so tests can build it with fakes.
 */
export function createApp(deps: AppDeps): Koa {
    const app = new Koa();
    app.proxy = false;
    // Errors are logged by errorMiddleware; Koa's default handler would print them again.
    app.silent = true;

    const router = new Router();
    router.get("/health", healthHandler(deps.engines));
    router.get("/metrics", metricsHandler(deps.metrics));

    const v1 = new Router({prefix: "/v1"});
    v1.get("/models", listModelsHandler(deps.engines));
    v1.get("/models/:id", retrieveModelHandler(deps.engines));
    const routeContext = {engines: deps.engines, logger: deps.logger, ssePingMs: deps.ssePingMs, jsonBody: jsonBody(deps.bodyLimit), rootRouter: router};
    for (const capability of deps.capabilities)
        capability.routes(v1, routeContext);

    const capabilityMappers = deps.capabilities.flatMap((capability) => capability.toApiError ?? []);
    // CORS first: preflights are answered before auth, and every answer (errors too) carries its headers.
    app.use(corsMiddleware(deps.corsOrigins));
    app.use(requestContext(deps.logger, deps.shutdownSignal, (error) => toApiError(error, capabilityMappers), deps.metrics));
    app.use(errorMiddleware(deps.logger));
    app.use(hostCheckMiddleware(deps.keys, deps.allowedHosts));
    // Auth guards the whole /v1 space, unknown paths included, before any routing; /metrics too unless made public.
    const auth = authMiddleware(deps.keys);
    const guarded = (path: string) => path === "/v1" || path.startsWith("/v1/") || (path === "/metrics" && !deps.metricsPublic);
    app.use((ctx, next) => guarded(ctx.path) ? auth(ctx, next) : next());
    app.use(router.routes());
    app.use(router.allowedMethods());
    app.use(v1.routes());
    // Not `throw: true`: in that mode the router does not set `Allow`; errorMiddleware shapes the 405.
    app.use(v1.allowedMethods());
    return app;
}
