import type { LlamaModel, Token } from "node-llama-cpp";
import type { LabelTokenizer } from "../shared/decisionLabels.js";
import type { Detokenize } from "../shared/TokenTextDecoder.js";

/**
 * A model's detokenizer as TokenTextDecoder takes it: control tokens as nothing, except `preserved` ones (the markup the
 * output's parsers read: Mistral's `[TOOL_CALLS]`, Gemma 4's `<|channel>`, which real GGUFs carry as control tokens, as
 * llama-server's preserved tokens), written as their text; the tokens before read for leading spaces.
 */
export function llamaDetokenize(model: LlamaModel, preserved: ReadonlySet<Token> = new Set()): Detokenize<Token> {
    if (preserved.size === 0)
        return (tokens, previous) => model.detokenize(tokens, false, previous);
    return (tokens, previous) => {
        if (!tokens.some((token) => preserved.has(token)))
            return model.detokenize(tokens, false, previous);
        let text = "";
        let from = 0;
        const context = previous == null ? [] : [...previous];
        for (let at = 0; at <= tokens.length; at++) {
            if (at < tokens.length && !preserved.has(tokens[at]))
                continue;
            if (at > from)
                text += model.detokenize(tokens.slice(from, at), false, [...context, ...tokens.slice(0, from)]);
            if (at < tokens.length)
                text += model.detokenize([tokens[at]], true);
            from = at + 1;
        }
        return text;
    };
}

/**
 * The control tokens among these texts' tokens (special tokens read as such): those llamaDetokenize would write as
 * nothing, which it keeps in an output whose parsers read them. Text tokens are left to the ordinary decoding.
 */
export function markupTokens(model: LlamaModel, texts: readonly string[]): Set<Token> {
    return new Set(texts.filter((text) => text !== "").flatMap((text) => model.tokenize(text, true, "trimLeadingSpace"))
        .filter((token) => model.detokenize([token], false) === "" && model.detokenize([token], true) !== ""));
}

/** A model's tokenizer as decisionLabels takes it: a label at an answer's start, and its spellings with a leading space. */
export function llamaLabelTokenizer(model: LlamaModel): LabelTokenizer<Token> {
    return {
        atStart: (text) => model.tokenize(text, false, "trimLeadingSpace"),
        variants: (text) => [model.tokenize(text, false), model.tokenize(" " + text, false, "trimLeadingSpace")]
    };
}
