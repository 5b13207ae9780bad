import crypto from "node:crypto";
import type { Middleware } from "koa";
import type { Logger } from "../logger.js";
import type { ApiError } from "../core/http/ApiError.js";
import { ClientDisconnectedError } from "../core/http/ClientDisconnectedError.js";
import type { RequestState } from "../core/http/RequestState.js";

/**
 * Gives each request an id, an AbortSignal that fires when the client disconnects (so its
 * generation stops at once and frees its sequence) or when the server shuts down, and one log line.
 */
export function requestContext(logger: Logger, shutdownSignal: AbortSignal, toApiError: (error: unknown) => ApiError): Middleware {
    return async (ctx, next) => {
        const disconnect = new AbortController();
        const onClose = () => {
            if (!ctx.res.writableFinished)
                disconnect.abort(new ClientDisconnectedError());
        };
        ctx.res.once("close", onClose);
        const state: RequestState = {
            requestId: "req_" + crypto.randomBytes(12).toString("hex"),
            signal: AbortSignal.any([disconnect.signal, shutdownSignal]),
            logFields: {},
            toApiError
        };
        Object.assign(ctx.state, state);
        ctx.set("X-Request-Id", state.requestId);

        const started = performance.now();
        try {
            await next();
        } finally {
            logger.info(`${ctx.method} ${ctx.path}`, {
                id: state.requestId,
                status: ctx.status,
                ms: Math.round(performance.now() - started),
                disconnected: disconnect.signal.aborted || undefined,
                ...ctx.state.logFields
            });
        }
    };
}
