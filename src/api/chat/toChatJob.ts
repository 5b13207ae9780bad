import crypto from "node:crypto";
import type { ChatEngineInfo, ChatJob, ChatTurn } from "../../engines/ChatEngine.js";
import { ApiError } from "../../server/ApiError.js";
import type { ChatCompletionRequest, WireMessage } from "./ChatCompletionWire.js";
import { checkJsonSchema } from "./checkJsonSchema.js";

/**
 * Converts a validated OpenAI request into an engine job, applying OpenAI's defaults and the
 * checks a schema cannot express. Pure: it needs only the engine's static info.
 */
export function toChatJob(request: ChatCompletionRequest, engine: ChatEngineInfo): ChatJob {
    rejectUnsupported(request);

    const turns = request.messages.map((message, index) => toTurn(message, index, engine.id));
    const jsonObject = request.response_format?.type === "json_object";
    const jsonSchemaFormat = request.response_format?.type === "json_schema" ? request.response_format.json_schema : undefined;
    const jsonSchema = jsonSchemaFormat == null
        ? null
        : checkJsonSchema(jsonSchemaFormat.schema ?? {type: "object"}, "response_format.json_schema.schema");
    if (jsonObject && !turns.some((turn) => /json/i.test(turn.content)))
        throw ApiError.invalidRequest(
            "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.",
            "messages");

    if (request.max_tokens != null && request.max_completion_tokens != null && request.max_tokens !== request.max_completion_tokens)
        throw ApiError.invalidRequest(
            "'max_tokens' and 'max_completion_tokens' are the same setting and were given different values; send only 'max_completion_tokens'.",
            "max_completion_tokens");

    if (request.top_logprobs != null && request.logprobs !== true)
        throw ApiError.invalidRequest("Invalid value: 'top_logprobs' requires 'logprobs' to be set to true.", "top_logprobs");

    if (request.stream_options != null && request.stream !== true)
        throw ApiError.invalidRequest("The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options");

    return {
        turns,
        n: request.n ?? 1,
        maxTokens: request.max_completion_tokens ?? request.max_tokens ?? null,
        stop: request.stop == null ? [] : typeof request.stop === "string" ? [request.stop] : [...request.stop],
        jsonObject,
        jsonSchema,
        logprobs: request.logprobs === true ? request.top_logprobs ?? 0 : null,
        sampling: {
            temperature: request.temperature ?? 1,
            topP: request.top_p ?? 1,
            // node-llama-cpp would seed unseeded requests with the current second, making two
            // unseeded requests in the same second identical.
            seed: request.seed ?? crypto.randomInt(0, 2 ** 48 - 1),
            frequencyPenalty: request.frequency_penalty ?? 0,
            presencePenalty: request.presence_penalty ?? 0,
            logitBias: toLogitBias(request.logit_bias, engine.vocabularySize)
        }
    };
}

function rejectUnsupported(request: ChatCompletionRequest) {
    const notYet = (param: string, what: string) =>
        ApiError.invalidRequest(`${what} is not supported by this server yet.`, param, "unsupported_parameter");
    if (request.tools != null && request.tools.length > 0)
        throw notYet("tools", "Tool calling ('tools')");
    if (request.tool_choice != null && request.tool_choice !== "none")
        throw notYet("tool_choice", "'tool_choice'");
    if (request.functions != null && request.functions.length > 0)
        throw notYet("functions", "Function calling ('functions')");
    if (request.function_call != null && request.function_call !== "none")
        throw notYet("function_call", "'function_call'");
}

function toTurn(message: WireMessage, index: number, modelId: string): ChatTurn {
    const param = `messages[${index}]`;
    if (message.role === "tool" || message.role === "function")
        throw ApiError.invalidRequest(`Messages with role '${message.role}' are not supported by this server yet (tool calling).`,
            `${param}.role`, "unsupported_parameter");
    if (message.role === "assistant" && (message.tool_calls != null || message.function_call != null))
        throw ApiError.invalidRequest("Assistant messages with tool calls are not supported by this server yet.",
            `${param}.${message.tool_calls != null ? "tool_calls" : "function_call"}`, "unsupported_parameter");

    const role = message.role === "developer" ? "system" : message.role;
    if (message.content == null) {
        if (role === "assistant")
            return {role, content: ""};
        throw ApiError.invalidRequest(`Missing required parameter: '${param}.content'.`, `${param}.content`);
    }
    if (typeof message.content === "string")
        return {role, content: message.content};

    const texts = message.content.map((part, partIndex) => {
        if (part.type === "text")
            return part.text!;
        const partParam = `${param}.content[${partIndex}].type`;
        if (part.type === "image_url" || part.type === "input_image" || part.type === "input_audio" || part.type === "file")
            throw ApiError.invalidRequest(
                `The model '${modelId}' is not multimodal: it accepts only text content parts, not '${part.type}'.`,
                partParam, "model_not_multimodal");
        throw ApiError.invalidRequest(`Invalid content part type '${part.type}': supported is 'text'.`, partParam);
    });
    return {role, content: texts.join("")};
}

function toLogitBias(logitBias: Record<string, number> | null | undefined, vocabularySize: number) {
    const biases = new Map<number, number>();
    for (const [key, value] of Object.entries(logitBias ?? {})) {
        const token = Number(key);
        if (token >= vocabularySize)
            throw ApiError.invalidRequest(
                `Invalid key in 'logit_bias': ${key} is not a token id of this model (its vocabulary has ${vocabularySize} tokens).`,
                `logit_bias.${key}`);
        if (value !== 0)
            biases.set(token, value);
    }
    return biases;
}
