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
 * - with a suffix, fill in the middle laid out as node-llama-cpp's own infill completion does:
 *   [BOS] <FIM_PRE> prefix <FIM_SUF> suffix <FIM_MID> (prefix-suffix-middle), or, for a model
 *   without a middle token, [BOS] <FIM_SUF> suffix <FIM_PRE> prefix; prefix and suffix text without
 *   SentencePiece's word-start space (they continue code, they do not start a text). The
 *   completion is the middle.
 */
export function rawPromptTokens(model: LlamaModel, raw: RawPrompt): RawPromptTokens {
    const bos = model.tokens.bos;
    const wantsBos = bos != null && model.tokens.shouldPrependBosToken;

    if (raw.suffix != null) {
        const {prefix: pre, suffix: suf, middle: mid} = model.tokens.infill;
        if (pre == null || suf == null)
            throw new Error("This model has no fill-in-the-middle tokens; the request should have been refused");
        const before = typeof raw.prompt === "string" ? model.tokenize(raw.prompt, false, "trimLeadingSpace") : raw.prompt.map((id) => id as Token);
        const after = model.tokenize(raw.suffix, false, "trimLeadingSpace");
        const tokens = mid != null ? [pre, ...before, suf, ...after, mid] : [suf, ...after, pre, ...before];
        return wantsBos ? {tokens: [bos, ...tokens], clientStart: 1} : {tokens, clientStart: 0};
    }
    if (typeof raw.prompt !== "string")
        return {tokens: raw.prompt.map((id) => id as Token), clientStart: 0};
    const tokens = model.tokenize(raw.prompt);
    return wantsBos ? {tokens: [bos, ...tokens], clientStart: 1} : {tokens, clientStart: 0};
}
