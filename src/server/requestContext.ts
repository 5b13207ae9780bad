import crypto from "node:crypto";
import type { Middleware } from "koa";
import { clipLogText, type Logger } from "../logger.js";
import type { ApiError } from "../core/http/ApiError.js";
import { ClientDisconnectedError } from "../core/http/ClientDisconnectedError.js";
import type { RequestState } from "../core/http/RequestState.js";
import type { ServerMetrics } from "./metrics/ServerMetrics.js";

/** The status logged and counted for a request whose client went away first (nginx's convention). */
const clientClosedRequest = 499;

/**
 * Gives each request an id, an AbortSignal that fires when the client disconnects (so its
 * generation stops at once and frees its sequence) or when the server shuts down, and one log line,
 * whose every text field (and the path) is clipped to `maxLogTextLength` characters: handlers put
 * client-sent text there (`user`, Messages' `metadata.user_id`), and a 9 MB one must not make a 9 MB line.
 */
export function requestContext(logger: Logger, shutdownSignal: AbortSignal, toApiError: (error: unknown) => ApiError, metrics?: ServerMetrics): Middleware {
    return async (ctx, next) => {
        const disconnect = new AbortController();
        const onClose = () => {
            // Once the shutdown's grace is over, a connection that closes was cut by the server (a raw audio stream's
            // body, cut without its last chunk while its client was still taking the earlier ones; a stalled one a second
            // later): its request ended with the shutdown, not with its client going away, and is logged as such.
            if (!ctx.res.writableFinished && !shutdownSignal.aborted)
                disconnect.abort(new ClientDisconnectedError());
        };
        ctx.res.once("close", onClose);
        const state: RequestState = {
            requestId: "req_" + crypto.randomBytes(12).toString("hex"),
            signal: AbortSignal.any([disconnect.signal, shutdownSignal]),
            logFields: {},
            toApiError,
            receivedAt: performance.now()
        };
        Object.assign(ctx.state, state);
        ctx.set("X-Request-Id", state.requestId);
        ctx.set("request-id", state.requestId);

        const started = state.receivedAt;
        try {
            await next();
        } finally {
            const logFields = ctx.state.logFields as Record<string, unknown>;
            // A client that closed the connection before the response was complete: nginx's 499
            // ("client closed request") in the log and /metrics, never a 5xx.
            const status = disconnect.signal.aborted ? clientClosedRequest : ctx.status;
            metrics?.observe({
                // The route's pattern, not the path: unknown paths must not grow a label each.
                endpoint: (ctx as {_matchedRoute?: unknown})._matchedRoute as string | undefined ?? "other",
                model: typeof logFields.model === "string" ? logFields.model : "",
                status,
                seconds: (performance.now() - started) / 1000,
                logFields
            });
            logger.info(`${ctx.method} ${clipLogText(ctx.path)}`, {
                id: state.requestId,
                status,
                ms: Math.round(performance.now() - started),
                disconnected: disconnect.signal.aborted || undefined,
                ...clippedFields(logFields)
            });
        }
    };
}

/** Log fields with every value that is not a number or a boolean as clipped text. */
function clippedFields(fields: Record<string, unknown>) {
    const clipped: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(fields))
        clipped[key] = value == null || typeof value === "number" || typeof value === "boolean" ? value : clipLogText(String(value));
    return clipped;
}
