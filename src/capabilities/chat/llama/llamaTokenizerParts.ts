import type { LlamaModel, Token } from "node-llama-cpp";
import type { LabelTokenizer } from "../shared/decisionLabels.js";
import type { Detokenize } from "../shared/TokenTextDecoder.js";

/** A model's detokenizer as TokenTextDecoder takes it: control tokens as nothing, the tokens before read for leading spaces. */
export function llamaDetokenize(model: LlamaModel): Detokenize<Token> {
    return (tokens, previous) => model.detokenize(tokens, false, previous);
}

/** A model's tokenizer as decisionLabels takes it: a label at an answer's start, and its spellings with a leading space. */
export function llamaLabelTokenizer(model: LlamaModel): LabelTokenizer<Token> {
    return {
        atStart: (text) => model.tokenize(text, false, "trimLeadingSpace"),
        variants: (text) => [model.tokenize(text, false), model.tokenize(" " + text, false, "trimLeadingSpace")]
    };
}
