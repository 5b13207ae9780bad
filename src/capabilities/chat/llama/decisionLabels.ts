import type { LlamaModel, Token } from "node-llama-cpp";

/**
 * An option's label as shown to the model; `token` writes it at the start of an answer, `tokens` are every single token
 * that writes it there (with a leading space too: SentencePiece models often start an answer with `▁A`, byte-level BPE
 * ones may with `ĠA`), whose probabilities add up to the label's.
 */
export type DecisionLabel = {text: string, token: Token, tokens: Token[]};

/** Candidate labels, best first: capital letters, then small letters, then digits (all one character, so none is a prefix of another). */
const candidates = [
    ..."ABCDEFGHIJKLMNOPQRSTUVWXYZ", ..."abcdefghijklmnopqrstuvwxyz", ..."0123456789"
];

/**
 * The labels a decision question's options get on this model: one character each, so no label is a prefix of another
 * (a label that is a prefix of another would also take the mass of the longer one's first token), and each written by
 * one token of the vocabulary at the start of an answer (tokenized without a leading space), so its probability is the
 * next-token probability of that token (and of its spelling with a leading space), read at once. Candidates the vocabulary splits (or that two labels would share a
 * token for) are left out; how many remain is the most options a question may have on this model.
 */
export function decisionLabels(model: LlamaModel): DecisionLabel[] {
    const labels: DecisionLabel[] = [];
    const used = new Set<Token>();
    for (const text of candidates) {
        const tokens = model.tokenize(text, false, "trimLeadingSpace");
        if (tokens.length !== 1 || used.has(tokens[0]))
            continue;
        const spaced = [model.tokenize(text, false), model.tokenize(" " + text, false, "trimLeadingSpace")]
            .filter((variant) => variant.length === 1 && !used.has(variant[0]) && variant[0] !== tokens[0])
            .map(([token]) => token);
        const all = [...new Set([tokens[0], ...spaced])];
        all.forEach((token) => used.add(token));
        labels.push({text, token: tokens[0], tokens: all});
    }
    return labels;
}
