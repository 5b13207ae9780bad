import type { Middleware } from "koa";
import type { EngineHost } from "../core/engines/EngineHost.js";

/**
 * GET /health, without auth: 200 once every model is loaded, 503 before (and after a failure),
 * with how busy each model is (parallel sequences, busy sequences, waiting requests).
 */
export function healthHandler(engines: EngineHost): Middleware {
    return (ctx) => {
        const ready = engines.state === "ready";
        ctx.status = ready ? 200 : 503;
        if (!ready)
            ctx.set("Retry-After", "1");
        ctx.body = {status: ready ? "ok" : engines.state, models: engines.loads()};
    };
}
