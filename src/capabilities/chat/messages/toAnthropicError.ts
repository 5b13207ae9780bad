import type { ApiError } from "../../../core/http/ApiError.js";
import type { AnthropicErrorBody, AnthropicErrorType } from "./MessagesWire.js";

/**
 * An error as Anthropic's API answers it: its status codes and error types, the field's path first in the
 * message (`messages.1.role: ...`, Anthropic's form), the request's id in the body, and `x-should-retry: false`
 * on a 4xx a retry cannot mend (all but 408, 409 and 429): Anthropic sends it, its SDKs obey it, and Claude Code
 * would otherwise retry a 401 for minutes. A full queue (our 503 with Retry-After on the OpenAI routes) is
 * Anthropic's 529 `overloaded_error`, which its SDKs retry.
 */
export function toAnthropicError(error: ApiError, requestId: string | null = null): {status: number, body: AnthropicErrorBody, headers: Record<string, string>} {
    const status = error.status === 503 ? 529 : error.status;
    const type: AnthropicErrorType =
        status === 401 ? "authentication_error"
            : status === 403 ? "permission_error"
                : status === 404 ? "not_found_error"
                    : status === 413 ? "request_too_large"
                        : status === 429 ? "rate_limit_error"
                            : status === 529 ? "overloaded_error"
                                : status >= 500 ? "api_error" : "invalid_request_error";
    const message = error.param != null && !error.message.startsWith(`${error.param}: `) ? `${error.param}: ${error.message}` : error.message;
    const final = status >= 400 && status < 500 && ![408, 409, 429].includes(status);
    return {status, body: {type: "error", error: {type, message}, request_id: requestId}, headers: final ? {"x-should-retry": "false"} : {}};
}
