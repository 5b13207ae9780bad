import type { Middleware } from "koa";
import type { Logger } from "../logger.js";
import { ApiError } from "../core/http/ApiError.js";
import { toApiError } from "./toApiError.js";

/**
 * Every error leaves the server here, in OpenAI's shape. Once headers are out (a stream), an
 * error can no longer change the status: the stream writer reports it in-band instead, and this
 * middleware only logs.
 */
export function errorMiddleware(logger: Logger, bodyLimit: string): Middleware {
    return async (ctx, next) => {
        try {
            await next();
            if (ctx.status === 404 && ctx.body == null && ctx.respond !== false)
                throw ApiError.notFound(`Unknown request URL: ${ctx.method} ${ctx.path}.`);
        } catch (error) {
            const apiError = toApiError(error, {bodyLimit});
            if (!(error instanceof ApiError) && apiError.status === 500)
                logger.error("Request failed", {id: ctx.state.requestId, error: (error as Error)?.stack ?? String(error)});
            if (ctx.headerSent || ctx.respond === false)
                return;
            ctx.status = apiError.status;
            ctx.set(apiError.headers);
            ctx.body = apiError.toBody();
        }
    };
}
