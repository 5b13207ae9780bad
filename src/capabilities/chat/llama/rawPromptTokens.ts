import type { LlamaModel, Token } from "node-llama-cpp";
import type { RawPrompt } from "../ChatEngine.js";

/** A raw prompt's tokens, and where the client's own tokens start (after a BOS the server put first). */
export type RawPromptTokens = {tokens: Token[], clientStart: number};

/**
 * The tokens of a raw prompt (legacy completions), without any template:
 * - token ids are used exactly as given (nothing added: the client controls its tokens, as it
 *   does with llama.cpp's server and vLLM);
 * - text is tokenized as llama.cpp tokenizes a prompt (text that spells a control token stays
 *   text), after BOS when the model asks for one, exactly as the chat prompt of a model without a
 *   template, so the same text gives the same tokens (and the same seeded sampling) on both;
 * - with a suffix, fill in the middle in llama.cpp's prefix-suffix-middle order:
 *   [BOS] <FIM_PRE> prefix <FIM_SUF> suffix <FIM_MID>; the completion is the middle.
 */
export function rawPromptTokens(model: LlamaModel, raw: RawPrompt): RawPromptTokens {
    const bos = model.tokens.bos;
    const wantsBos = bos != null && model.tokens.shouldPrependBosToken;
    const prefix = typeof raw.prompt === "string" ? model.tokenize(raw.prompt) : raw.prompt.map((id) => id as Token);

    if (raw.suffix != null) {
        const {prefix: pre, suffix: suf, middle: mid} = model.tokens.infill;
        if (pre == null || suf == null || mid == null)
            throw new Error("This model has no fill-in-the-middle tokens; the request should have been refused");
        const tokens = [pre, ...prefix, suf, ...model.tokenize(raw.suffix), mid];
        return wantsBos ? {tokens: [bos, ...tokens], clientStart: 1} : {tokens, clientStart: 0};
    }
    if (typeof raw.prompt !== "string" || !wantsBos || prefix[0] === bos)
        return {tokens: prefix, clientStart: 0};
    return {tokens: [bos, ...prefix], clientStart: 1};
}
