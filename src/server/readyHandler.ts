import type { Middleware } from "koa";
import type { EngineHost } from "../core/engines/EngineHost.js";

/**
 * GET /health/ready, without auth, for load balancers and Kubernetes: 200 only while this replica
 * can take requests. Models load when first asked for, so that is at once after start, unless models are
 * preloaded (manifest `preload`, `--preload-all`: a replica that must be warm before it takes traffic):
 * 503 with a `reason` while they load (`loading`) or while one of them failed (`failed`), when every loaded model's
 * sequences are busy and its waiting line is full (the next request would get a 503 anyway), and
 * from the first moment of a graceful shutdown (`draining`), which keeps serving for --drain-seconds
 * so a balancer has time to notice before the port closes.
 */
export function readyHandler(engines: EngineHost, queueSize: number, draining: AbortSignal): Middleware {
    return (ctx) => {
        const loads = Object.values(engines.loads());
        const reason = draining.aborted ? "draining"
            : engines.state !== "ready" ? engines.state
            : loads.length > 0 && loads.every((load) => load.busy >= load.parallel && load.waiting >= queueSize) ? "saturated"
            : null;
        ctx.status = reason == null ? 200 : 503;
        if (reason != null)
            ctx.set("Retry-After", "1");
        ctx.set("Cache-Control", "no-store");
        ctx.body = reason == null ? {status: "ready"} : {status: "unavailable", reason};
    };
}
