import type { LlamaModel, Token } from "node-llama-cpp";

/** An option's label as shown to the model, and the one token that writes it. */
export type DecisionLabel = {text: string, token: Token};

/** Candidate labels, best first: capital letters, then small letters, then digits (all one character, so none is a prefix of another). */
const candidates = [
    ..."ABCDEFGHIJKLMNOPQRSTUVWXYZ", ..."abcdefghijklmnopqrstuvwxyz", ..."0123456789"
];

/**
 * The labels a decision question's options get on this model: one character each, so no label is a prefix of another
 * (a label that is a prefix of another would also take the mass of the longer one's first token), and each written by
 * one token of the vocabulary at the start of an answer (tokenized without a leading space), so its probability is the
 * next-token probability of that token, read at once. Candidates the vocabulary splits (or that two labels would share a
 * token for) are left out; how many remain is the most options a question may have on this model.
 */
export function decisionLabels(model: LlamaModel): DecisionLabel[] {
    const labels: DecisionLabel[] = [];
    const used = new Set<Token>();
    for (const text of candidates) {
        const tokens = model.tokenize(text, false, "trimLeadingSpace");
        if (tokens.length !== 1 || used.has(tokens[0]))
            continue;
        used.add(tokens[0]);
        labels.push({text, token: tokens[0]});
    }
    return labels;
}
