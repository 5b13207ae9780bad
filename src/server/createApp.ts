import Koa from "koa";
import Router from "@koa/router";
import { chatCompletionsHandler } from "../capabilities/chat/chatCompletionsHandler.js";
import { embeddingsHandler } from "../capabilities/embeddings/embeddingsHandler.js";
import { listModelsHandler, retrieveModelHandler } from "./models/modelsHandlers.js";
import type { ApiKeyStore } from "../auth/ApiKeyStore.js";
import type { EngineHost } from "../core/engines/EngineHost.js";
import type { Logger } from "../logger.js";
import type { ModelRegistry } from "../registry/ModelRegistry.js";
import { authMiddleware } from "./authMiddleware.js";
import { errorMiddleware } from "./errorMiddleware.js";
import { healthHandler } from "./healthHandler.js";
import { jsonBody } from "./jsonBody.js";
import { requestContext } from "./requestContext.js";

export type AppDeps = {
    registry: ModelRegistry;
    engines: EngineHost;
    keys: ApiKeyStore;
    logger: Logger;
    bodyLimit: string;
    ssePingMs: number;
    /** Aborts every in-flight request (shutdown). */
    shutdownSignal: AbortSignal;
};

/** The Koa app and its one route table. Everything it needs is passed in, so tests can build it with fakes. */
export function createApp(deps: AppDeps): Koa {
    const app = new Koa();
    app.proxy = false;
    // Errors are logged by errorMiddleware; Koa's default handler would print them again.
    app.silent = true;

    const router = new Router();
    router.get("/health", healthHandler(deps.engines));

    const v1 = new Router({prefix: "/v1"});
    v1.get("/models", listModelsHandler(deps.registry, deps.engines));
    v1.get("/models/:id", retrieveModelHandler(deps.registry, deps.engines));
    v1.post("/chat/completions", jsonBody(deps.bodyLimit), chatCompletionsHandler(deps));
    v1.post("/embeddings", jsonBody(deps.bodyLimit), embeddingsHandler(deps));

    app.use(requestContext(deps.logger, deps.shutdownSignal));
    app.use(errorMiddleware(deps.logger, deps.bodyLimit));
    // Auth guards the whole /v1 space, unknown paths included, before any routing.
    const auth = authMiddleware(deps.keys);
    app.use((ctx, next) => ctx.path === "/v1" || ctx.path.startsWith("/v1/") ? auth(ctx, next) : next());
    app.use(router.routes());
    app.use(v1.routes());
    app.use(v1.allowedMethods({throw: true}));
    return app;
}
