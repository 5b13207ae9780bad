import { EngineDisposedError } from "../core/engines/EngineDisposedError.js";
import { QueueFullError } from "../core/engines/QueueFullError.js";
import { PoolClosedError } from "../core/workers/PoolClosedError.js";
import { ApiError } from "../core/http/ApiError.js";
import { ServerShutdownError } from "../core/http/ServerShutdownError.js";

/** A capability's mapping of its own engine errors; undefined = not one of its errors. */
export type ErrorMapper = (error: unknown) => ApiError | undefined;

/** Seconds a client should wait after a full queue; the openai client honours Retry-After. */
const queueRetryAfterSeconds = 2;

/**
 * The single mapping from anything thrown while serving a request to the HTTP error a client sees:
 * the shared machinery's errors here, each capability's own through `capabilityMappers`.
 * Unknown errors become an opaque 500: their message may contain paths or internals.
 */
export function toApiError(error: unknown, capabilityMappers: readonly ErrorMapper[] = []): ApiError {
    if (error instanceof ApiError)
        return error;
    if (error instanceof QueueFullError)
        return ApiError.overloaded(error.message, queueRetryAfterSeconds);
    if (error instanceof EngineDisposedError || error instanceof PoolClosedError)
        return ApiError.unavailable(error.message, 5);
    if (error instanceof ServerShutdownError)
        return ApiError.shuttingDown(error.message);
    for (const mapper of capabilityMappers) {
        const mapped = mapper(error);
        if (mapped != null)
            return mapped;
    }

    // The router's errors (koa's http-errors).
    const httpError = error as {status?: unknown, expose?: unknown, message?: unknown};
    if (httpError != null && typeof httpError.status === "number") {
        if (httpError.status === 405 || httpError.status === 501)
            return new ApiError(httpError.status, "invalid_request_error", String(httpError.message), {code: "method_not_allowed"});
        if (httpError.status >= 400 && httpError.status < 500 && httpError.expose === true)
            return new ApiError(httpError.status, "invalid_request_error", String(httpError.message));
    }
    return ApiError.internal();
}
