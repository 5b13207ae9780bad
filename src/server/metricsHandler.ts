import type { Middleware } from "koa";
import type { ServerMetrics } from "./metrics/ServerMetrics.js";

/** GET /metrics in Prometheus' text format. */
export function metricsHandler(metrics: ServerMetrics): Middleware {
    return async (ctx) => {
        ctx.type = metrics.registry.contentType;
        ctx.body = await metrics.registry.metrics();
    };
}
