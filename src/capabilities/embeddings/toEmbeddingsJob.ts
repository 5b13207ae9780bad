import type { EmbeddingInput, EmbeddingsEngineInfo } from "./EmbeddingsEngine.js";
import { ApiError } from "../../core/http/ApiError.js";
import type { EmbeddingsRequest, EncodingFormat } from "./EmbeddingsWire.js";

/** Most inputs in one request, as OpenAI. */
const maxEmbeddingInputs = 2048;

export type EmbeddingsJob = {
    inputs: EmbeddingInput[];
    /** The request parameter of each input (`input`, `input[3]`), for errors about one input. */
    params: string[];
    dimensions: number | null;
    encodingFormat: EncodingFormat;
};

/**
 * Converts a validated request into engine inputs, with every check that needs no tokenizer:
 * the four input forms, empty inputs, at most 2048 items, token ids inside the vocabulary, token
 * arrays within the model's input limit, and `dimensions`. Pure: only the engine's static info.
 */
export function toEmbeddingsJob(request: EmbeddingsRequest, info: EmbeddingsEngineInfo): EmbeddingsJob {
    const {inputs, params} = toInputs(request.input, info);
    return {
        inputs, params,
        dimensions: toDimensions(request.dimensions ?? null, info),
        encodingFormat: request.encoding_format ?? "float"
    };
}

function toInputs(input: string | unknown[], info: EmbeddingsEngineInfo): {inputs: EmbeddingInput[], params: string[]} {
    if (typeof input === "string") {
        if (input === "")
            throw ApiError.invalidRequest("'input' must not be an empty string.", "input");
        return {inputs: [input], params: ["input"]};
    }
    if (input.length === 0)
        throw ApiError.invalidRequest("'input' must not be an empty array.", "input");

    const first = input[0];
    if (isTokenId(first)) {
        // One input given as token ids.
        checkTokens(input, "input", info);
        return {inputs: [input as number[]], params: ["input"]};
    }
    if (input.length > maxEmbeddingInputs)
        throw ApiError.invalidRequest(`'input' has ${input.length} items; at most ${maxEmbeddingInputs} inputs are allowed per request.`, "input");
    if (typeof first === "string") {
        input.forEach((item, index) => {
            if (typeof item !== "string")
                throw ApiError.invalidRequest(`Invalid type for 'input[${index}]': expected a string like the other items, but got ${describe(item)}.`, `input[${index}]`);
            if (item === "")
                throw ApiError.invalidRequest(`'input[${index}]' must not be an empty string.`, `input[${index}]`);
        });
        return {inputs: input as string[], params: input.map((_, index) => `input[${index}]`)};
    }
    if (Array.isArray(first)) {
        input.forEach((item, index) => {
            if (!Array.isArray(item))
                throw ApiError.invalidRequest(`Invalid type for 'input[${index}]': expected an array of token ids like the other items, but got ${describe(item)}.`, `input[${index}]`);
            checkTokens(item, `input[${index}]`, info);
        });
        return {inputs: input as number[][], params: input.map((_, index) => `input[${index}]`)};
    }
    throw ApiError.invalidRequest(
        `Invalid type for 'input[0]': expected a string, a token id or an array of token ids, but got ${describe(first)}.`, "input[0]");
}

function checkTokens(tokens: unknown[], param: string, info: EmbeddingsEngineInfo) {
    if (tokens.length === 0)
        throw ApiError.invalidRequest(`'${param}' must not be an empty array of token ids.`, param);
    tokens.forEach((token, index) => {
        if (!isTokenId(token))
            throw ApiError.invalidRequest(`Invalid value for '${param}[${index}]': expected a token id (an integer from 0), but got ${describe(token)}.`, `${param}[${index}]`);
        if (token >= info.vocabularySize)
            throw ApiError.invalidRequest(
                `Invalid value for '${param}[${index}]': ${token} is not a token id of this model (its vocabulary has ${info.vocabularySize} tokens).`,
                `${param}[${index}]`);
    });
    if (tokens.length > info.maxInputTokens)
        throw ApiError.invalidRequest(
            `This model's maximum input length is ${info.maxInputTokens} tokens, but '${param}' has ${tokens.length} tokens. Please shorten the input.`,
            param, "context_length_exceeded");
}

function toDimensions(dimensions: number | null, info: EmbeddingsEngineInfo): number | null {
    if (dimensions == null)
        return null;
    if (info.matryoshka === false)
        throw ApiError.invalidRequest(
            `The model '${info.id}' does not support 'dimensions': its vectors always have ${info.dimensions} dimensions.`,
            "dimensions", "unsupported_parameter");
    if (Array.isArray(info.matryoshka)) {
        if (!info.matryoshka.includes(dimensions))
            throw ApiError.invalidRequest(
                `Invalid value for 'dimensions': ${dimensions}. The model '${info.id}' supports ${info.matryoshka.join(", ")}.`, "dimensions");
    } else if (dimensions > info.dimensions) {
        throw ApiError.invalidRequest(
            `Invalid value for 'dimensions': ${dimensions}. The model '${info.id}' supports 1 to ${info.dimensions}.`, "dimensions");
    }
    return dimensions;
}

function isTokenId(value: unknown): value is number {
    return typeof value === "number" && Number.isInteger(value) && value >= 0;
}

function describe(value: unknown) {
    if (value === null) return "null";
    if (Array.isArray(value)) return "an array";
    if (typeof value === "number") return Number.isInteger(value) ? `the number ${value}` : "a decimal";
    if (typeof value === "string") return "a string";
    return `a${typeof value === "object" ? "n" : ""} ${typeof value}`;
}
