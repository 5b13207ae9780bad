import type { Middleware } from "koa";
import { ApiError } from "../core/http/ApiError.js";
import type { RequestState } from "../core/http/RequestState.js";
import type { Logger } from "../logger.js";
import { ClientDisconnectedError } from "../core/http/ClientDisconnectedError.js";

/**
 * Every error leaves the server here, in OpenAI's shape. Once headers are out (a stream), an
 * error can no longer change the status: the stream writer reported it in-band already, and this
 * middleware only logs.
 */
export type ErrorShape = (error: ApiError, requestId: string) => {status: number, body: unknown, headers?: Record<string, string>};

/** `shapes`: routes (by pattern) whose errors another API's shape renders (Anthropic's Messages API). */
export function errorMiddleware(logger: Logger, shapes: Readonly<Record<string, ErrorShape>> = {}): Middleware {
    return async (ctx, next) => {
        // Read when an error is told (the route has matched by then), here or inside a stream.
        (ctx.state as RequestState).shapeError = (error) => shapes[(ctx as {_matchedRoute?: string})._matchedRoute ?? ""]?.(error, (ctx.state as RequestState).requestId)
            ?? {status: error.status, body: error.toBody()};
        try {
            await next();
            if (ctx.status === 404 && ctx.body == null && ctx.respond !== false)
                throw ApiError.notFound(`Unknown request URL: ${ctx.method} ${ctx.path}.`);
            // The router's answer to a known path with another method: keep its Allow header, give the body our shape.
            if ((ctx.status === 405 || ctx.status === 501) && ctx.body == null)
                throw ApiError.methodNotAllowed(ctx.status, ctx.method, ctx.path, ctx.response.get("Allow"));
        } catch (error) {
            const state = ctx.state as RequestState;
            // The client went away: nothing can be answered, and it is not the server's failure (the
            // request's line says status=499, as nginx logs it; see requestContext).
            if (clientGone(state, error))
                return;
            const apiError = state.toApiError(error);
            if (!(error instanceof ApiError) && apiError.status === 500)
                logger.error(ctx.headerSent ? "Stream failed" : "Request failed", {id: state.requestId, error: (error as Error)?.stack ?? String(error)});
            if (ctx.headerSent || ctx.respond === false)
                return;
            const shaped = state.shapeError!(apiError);
            ctx.status = shaped.status;
            ctx.set({...apiError.headers, ...shaped.headers});
            ctx.body = shaped.body;
        }
    };
}

function clientGone(state: RequestState, error: unknown) {
    return error instanceof ClientDisconnectedError || (state.signal.aborted && state.signal.reason instanceof ClientDisconnectedError);
}
