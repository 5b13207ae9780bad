import type { LlamaModel, Token, Tokenizer } from "node-llama-cpp";
import type { TextRequest } from "./preparePrompt.js";

/**
 * Text's tokens as llama.cpp's `llama_tokenize` gives them (what llama-server's /tokenize answers): SentencePiece's
 * space prefix included; special-token text read as those tokens when `parseSpecial` (`tokenizer` cuts long text in
 * pieces, chunkedTokenizer); with `addSpecial`, BOS first and EOS last where the model's vocabulary asks for them.
 */
export function textTokens(model: LlamaModel, tokenizer: Tokenizer, request: TextRequest): Token[] {
    const tokens = request.text === "" ? [] : tokenizer(request.text, request.parseSpecial);
    if (!request.addSpecial)
        return tokens;
    const {bos, eos} = model.tokens;
    if (bos != null && model.tokens.shouldPrependBosToken)
        tokens.unshift(bos);
    if (eos != null && model.tokens.shouldAppendEosToken)
        tokens.push(eos);
    return tokens;
}
