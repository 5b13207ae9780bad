import { ApiError } from "../../core/http/ApiError.js";
import { ContextLengthExceededError } from "./errors/ContextLengthExceededError.js";
import { EmptyPromptError } from "./errors/EmptyPromptError.js";
import { ImageInputError } from "./errors/ImageInputError.js";
import { InvalidJsonSchemaError } from "./errors/InvalidJsonSchemaError.js";
import { TemplateRefusedError } from "./errors/TemplateRefusedError.js";
import { TooManyChoicesError } from "./errors/TooManyChoicesError.js";

const imageErrorCodes = {base64: "invalid_image_url", format: "invalid_image_format", pixels: "image_too_large", undecodable: "invalid_image"} as const;

/** The chat engine's errors as the client sees them. */
export function chatApiError(error: unknown): ApiError | undefined {
    if (error instanceof ContextLengthExceededError)
        return ApiError.invalidRequest(error.message, "messages", "context_length_exceeded");
    if (error instanceof EmptyPromptError)
        return ApiError.invalidRequest(error.message, "messages");
    if (error instanceof ImageInputError)
        return ApiError.invalidRequest(`Invalid '${error.source}': ${error.message}.`, error.source, imageErrorCodes[error.reason]);
    if (error instanceof TooManyChoicesError)
        return ApiError.invalidRequest(error.message, "n");
    if (error instanceof TemplateRefusedError)
        return ApiError.invalidRequest(error.message, error.param, error.param === "messages" ? "invalid_conversation" : null);
    if (error instanceof InvalidJsonSchemaError)
        return ApiError.invalidRequest(error.message, "response_format.json_schema.schema", "invalid_json_schema");
    return undefined;
}
