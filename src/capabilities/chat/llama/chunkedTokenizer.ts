import type { LlamaModel, Token, Tokenizer } from "node-llama-cpp";
import type { SpecialTokenTexts } from "./SpecialTokenTexts.js";

/** Characters of special-token text tokenized in one call (a rendered template is cut where SpecialTokenTexts allows). */
const pieceChars = 4096;

/**
 * `model.tokenizer`, except that long text tokenized with special tokens (a rendered template) is tokenized in
 * pieces of about 4 KB cut where SpecialTokenTexts.cuts allows, with the same tokens. llama.cpp's special-token pass
 * over one text is quadratic in the special tokens it finds (it searches the whole rest of the text for each token
 * kind in each piece found so far): the template text of 16,000 empty messages took 14 s in one call, 0.6 s in pieces.
 * `checkpoint` is called before each piece: it throws to stop (the render thread's request was cancelled).
 */
export function chunkedTokenizer(model: LlamaModel, specials: SpecialTokenTexts, checkpoint: () => void = () => {}): Tokenizer {
    const whole = model.tokenizer;
    const tokenize = (text: string, specialTokens?: boolean | "builtin", options?: "trimLeadingSpace"): Token[] => {
        if (specialTokens !== true || text.length <= pieceChars)
            return whole(text, specialTokens as boolean, options);
        const cuts = specials.cuts(text, pieceChars);
        if (cuts.length === 0)
            return whole(text, true, options);
        const tokens = whole(text.slice(0, cuts[0]), true, options);
        // Each later piece starts with a special token: no leading space to trim.
        for (const [index, cut] of cuts.entries()) {
            checkpoint();
            for (const token of model.tokenize(text.slice(cut, cuts[index + 1] ?? text.length), true))
                tokens.push(token);
        }
        return tokens;
    };
    return Object.assign(tokenize as Tokenizer, {
        detokenize: whole.detokenize,
        isSpecialToken: whole.isSpecialToken,
        isEogToken: whole.isEogToken
    });
}
