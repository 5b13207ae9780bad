import { ApiError } from "../../../core/http/ApiError.js";
import { ContextLengthExceededError } from "../errors/ContextLengthExceededError.js";
import { EmptyPromptError } from "../errors/EmptyPromptError.js";
import { TooManyChoicesError } from "../errors/TooManyChoicesError.js";
import type { CompletionRequest } from "./CompletionWire.js";

/** The engine's refusal of prompt `prompt` in the legacy API's words and fields (`prompt[i]`, `best_of`); other errors as they are. */
export function toCompletionError(error: unknown, request: CompletionRequest, prompt: number): unknown {
    const param = Array.isArray(request.prompt) && request.prompt.some((item) => typeof item !== "number") ? `prompt[${prompt}]` : "prompt";
    if (error instanceof ContextLengthExceededError)
        return ApiError.invalidRequest(
            `This model's maximum context length is ${error.contextSize} tokens, however your prompt is ${error.atLeast ? "at least " : ""}${error.promptTokens} tokens. Please reduce the length of the prompt.`,
            param, "context_length_exceeded");
    if (error instanceof EmptyPromptError)
        return ApiError.invalidRequest(`Invalid '${param}': ${error.message}`, param);
    if (error instanceof TooManyChoicesError)
        return ApiError.invalidRequest(error.message.replace("'n' is", request.best_of != null ? "'best_of' is" : "'n' is"),
            request.best_of != null ? "best_of" : "n");
    return error;
}
