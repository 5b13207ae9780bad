import { ApiError } from "../../core/http/ApiError.js";

/** OpenAI's `logit_bias` (token id strings -> -100..100, checked by the schema) as engine biases; ids outside the vocabulary are a 400. */
export function toLogitBias(logitBias: Record<string, number> | null | undefined, vocabularySize: number) {
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
