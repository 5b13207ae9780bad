import { clipLogText } from "../../logger.js";
import { closestName } from "./closestName.js";

/**
 * The one error type every layer throws when a request cannot be served. It carries everything the
 * HTTP layer needs (status, OpenAI error type/code/param, extra headers), so mapping to the wire
 * happens in exactly one place: `errorMiddleware`.
 */
export type ApiErrorType =
    | "invalid_request_error"
    | "not_found_error"
    | "server_error"
    | "service_unavailable_error";

export type ApiErrorBody = {
    error: {
        message: string;
        type: ApiErrorType;
        param: string | null;
        code: string | null;
    };
};

export class ApiError extends Error {
    readonly status: number;
    readonly type: ApiErrorType;
    readonly code: string | null;
    readonly param: string | null;
    readonly headers: Record<string, string>;

    constructor(status: number, type: ApiErrorType, message: string, options: {code?: string | null, param?: string | null, headers?: Record<string, string>} = {}) {
        super(message);
        this.name = "ApiError";
        this.status = status;
        this.type = type;
        this.code = options.code ?? null;
        this.param = options.param ?? null;
        this.headers = options.headers ?? {};
    }

    toBody(): ApiErrorBody {
        return {error: {message: this.message, type: this.type, param: this.param, code: this.code}};
    }

    static invalidRequest(message: string, param: string | null = null, code: string | null = null) {
        return new ApiError(400, "invalid_request_error", message, {param, code});
    }

    static invalidApiKey(message: string) {
        return new ApiError(401, "invalid_request_error", message, {code: "invalid_api_key"});
    }

    /** `served`: the names this server serves, listed (with the nearest one, when the name looks like a typo of it). */
    static modelNotFound(model: string, served: readonly string[] = []) {
        const shown = clipLogText(model, 100);
        const nearest = closestName(model, served);
        const listed = served.length === 0 ? "" : ` Models served here: ${served.slice(0, 20).join(", ")}${served.length > 20 ? `, and ${served.length - 20} more` : ""}.` +
            (nearest != null ? ` Did you mean '${nearest}'?` : "");
        return new ApiError(404, "invalid_request_error", `The model '${shown}' does not exist or you do not have access to it.${listed}`, {
            code: "model_not_found",
            param: "model"
        });
    }

    static notFound(message: string) {
        return new ApiError(404, "invalid_request_error", message, {code: "not_found"});
    }

    /** 405 (or 501 for a method the server knows nothing of), with the `Allow` header RFC 9110 requires. */
    static methodNotAllowed(status: number, method: string, path: string, allow: string) {
        return new ApiError(status, "invalid_request_error", `${method} is not allowed on ${path}; allowed: ${allow}.`,
            {code: "method_not_allowed", headers: {Allow: allow}});
    }

    static payloadTooLarge(limit: string) {
        return new ApiError(413, "invalid_request_error", `Request body is larger than the server's limit of ${limit}.`, {code: "request_too_large"});
    }

    static unsupportedMediaType(contentType: string | undefined) {
        return new ApiError(415, "invalid_request_error",
            `Unsupported Content-Type ${contentType ? `'${contentType}'` : "(none)"}: send the request body as JSON with 'Content-Type: application/json'.`,
            {code: "unsupported_media_type"});
    }

    static overloaded(message: string, retryAfterSeconds: number) {
        return new ApiError(503, "service_unavailable_error", message, {
            code: "server_overloaded",
            headers: {"Retry-After": String(retryAfterSeconds)}
        });
    }

    static unavailable(message: string, retryAfterSeconds: number) {
        return new ApiError(503, "service_unavailable_error", message, {
            code: "service_unavailable",
            headers: {"Retry-After": String(retryAfterSeconds)}
        });
    }

    /** The server's shutdown grace ended while the request ran (ServerShutdownError); in a stream, its terminal error. */
    static shuttingDown(message: string) {
        return new ApiError(503, "service_unavailable_error", message, {code: "server_shutting_down", headers: {"Retry-After": "5"}});
    }

    static internal() {
        return new ApiError(500, "server_error", "The server had an error while processing your request. Sorry about that!", {code: "internal_error"});
    }
}
