import type { ApiError } from "../../../core/http/ApiError.js";
import type { AnthropicErrorBody, AnthropicErrorType } from "./MessagesWire.js";

/**
 * An error as Anthropic's API answers it: its status codes and error types. A full queue (our 503
 * with Retry-After on the OpenAI routes) is Anthropic's 529 `overloaded_error`, which its SDKs retry.
 */
export function toAnthropicError(error: ApiError): {status: number, body: AnthropicErrorBody} {
    const status = error.status === 503 ? 529 : error.status;
    const type: AnthropicErrorType =
        status === 401 ? "authentication_error"
            : status === 403 ? "permission_error"
                : status === 404 ? "not_found_error"
                    : status === 413 ? "request_too_large"
                        : status === 429 ? "rate_limit_error"
                            : status === 529 ? "overloaded_error"
                                : status >= 500 ? "api_error" : "invalid_request_error";
    const where = error.param != null && !error.message.includes(error.param) ? ` (${error.param})` : "";
    return {status, body: {type: "error", error: {type, message: `${error.message}${where}`}}};
}
