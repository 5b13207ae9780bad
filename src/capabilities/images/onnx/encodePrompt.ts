import type { SdPipeline } from "./loadSdPipeline.js";

export type EncodedPrompt = {
    /** Exactly `textWindow` ids: <|startoftext|> tokens <|endoftext|>, padded with the pad token. */
    ids: number[];
    /** Tokens before padding (with the start and end tokens), after truncation. */
    tokens: number;
    truncated: boolean;
};

/**
 * Tokenizes as diffusers does (`tokenizer(prompt, padding="max_length", max_length=77, truncation=True)`): a prompt
 * longer than the window keeps its first window − 2 tokens between the start and end tokens; the rest is dropped
 * (the caller logs it; diffusers warns the same way).
 */
export function encodePrompt(pipeline: SdPipeline, text: string): EncodedPrompt {
    const window = pipeline.describe.textWindow;
    let ids = pipeline.tokenizer.encode(text);
    const truncated = ids.length > window;
    if (truncated)
        ids = [...ids.slice(0, window - 1), pipeline.eosTokenId];
    const tokens = ids.length;
    return {ids: [...ids, ...new Array<number>(window - ids.length).fill(pipeline.padTokenId)], tokens, truncated};
}
