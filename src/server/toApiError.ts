import { ContextLengthExceededError, EngineDisposedError, InputTooLongError, InvalidJsonSchemaError, QueueFullError, TooManyChoicesError } from "../core/engines/EngineErrors.js";
import { ApiError } from "../core/http/ApiError.js";

/** Seconds a client should wait after a full queue; the openai client honours Retry-After. */
const queueRetryAfterSeconds = 2;

/**
 * The single mapping from anything thrown while serving a request to the HTTP error a client sees.
 * Unknown errors become an opaque 500: their message may contain paths or internals.
 */
export function toApiError(error: unknown, context: {bodyLimit: string}): ApiError {
    if (error instanceof ApiError)
        return error;
    if (error instanceof QueueFullError)
        return ApiError.overloaded(error.message, queueRetryAfterSeconds);
    if (error instanceof ContextLengthExceededError)
        return ApiError.invalidRequest(error.message, "messages", "context_length_exceeded");
    if (error instanceof TooManyChoicesError)
        return ApiError.invalidRequest(error.message, "n");
    if (error instanceof InputTooLongError)
        return ApiError.invalidRequest(error.message, `input[${error.inputIndex}]`, "context_length_exceeded");
    if (error instanceof InvalidJsonSchemaError)
        return ApiError.invalidRequest(error.message, "response_format.json_schema.schema", "invalid_json_schema");
    if (error instanceof EngineDisposedError)
        return ApiError.unavailable(error.message, 5);

    const httpError = error as {status?: unknown, type?: unknown, expose?: unknown, message?: unknown};
    if (httpError != null && typeof httpError.status === "number") {
        // Errors of the body parser (raw-body / co-body) and of the router.
        if (httpError.type === "entity.too.large" || httpError.status === 413)
            return ApiError.payloadTooLarge(context.bodyLimit);
        if (httpError.type === "encoding.unsupported" || httpError.status === 415)
            return new ApiError(415, "invalid_request_error", String(httpError.message), {code: "unsupported_media_type"});
        if (httpError.status === 400)
            return ApiError.invalidRequest(
                "We could not parse the JSON body of your request. The server expects a JSON object as the request body.",
                null, "invalid_json");
        if (httpError.status === 405 || httpError.status === 501)
            return new ApiError(httpError.status, "invalid_request_error", String(httpError.message), {code: "method_not_allowed"});
        if (httpError.status >= 400 && httpError.status < 500 && httpError.expose === true)
            return new ApiError(httpError.status, "invalid_request_error", String(httpError.message));
    }
    return ApiError.internal();
}
