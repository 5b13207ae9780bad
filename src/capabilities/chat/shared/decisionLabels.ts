/**
 * An option's label as shown to the model; `token` writes it at the start of an answer, `tokens` are every single token
 * that writes it there (with a leading space too: SentencePiece models often start an answer with `▁A`, byte-level BPE
 * ones may with `ĠA`), whose probabilities add up to the label's.
 */
export type DecisionLabel<Token extends number = number> = {text: string, token: Token, tokens: Token[]};

/**
 * A two-token label for questions with more options than the model has single-token labels: a letter label (`first`)
 * then a digit (`second`), `B7`. Its probability is the first's (any of its tokens) times the digit's as the next token
 * after the first's own token.
 */
export type DecisionLabelPair<Token extends number = number> = {text: string, first: DecisionLabel<Token>, second: Token};

/** The labels a model's decision questions get: single tokens while a question's options fit them, else pairs. */
export type DecisionLabels<Token extends number = number> = {singles: readonly DecisionLabel<Token>[], pairs: readonly DecisionLabelPair<Token>[]};

/**
 * How an engine's tokenizer writes a label: `atStart`, at the start of an answer without a leading space (llama.cpp's
 * `trimLeadingSpace`); `variants`, the other single tokens that may start an answer with it (with a leading space).
 */
export type LabelTokenizer<Token extends number> = {atStart(text: string): Token[], variants(text: string): Token[][]};

/** Candidate labels, best first: capital letters, then small letters, then digits (all one character, so none is a prefix of another). */
const candidates = [
    ..."ABCDEFGHIJKLMNOPQRSTUVWXYZ", ..."abcdefghijklmnopqrstuvwxyz", ..."0123456789"
];

/** The labels of a question with `optionCount` options: single tokens when they are enough, else two-token labels. */
export function labelsFor<Token extends number>(labels: DecisionLabels<Token>, optionCount: number): readonly DecisionLabel<Token>[] | readonly DecisionLabelPair<Token>[] {
    return optionCount <= labels.singles.length ? labels.singles.slice(0, optionCount) : labels.pairs.slice(0, optionCount);
}

/** The most options a question may have on a model with these labels. */
export function mostDecisionOptions(labels: DecisionLabels): number {
    return Math.max(labels.singles.length, labels.pairs.length);
}

/**
 * The labels decision questions' options get on this model. Single labels are one character each, so no label is a
 * prefix of another (a label that is a prefix of another would also take the mass of the longer one's first token),
 * and each is written by one token of the vocabulary at the start of an answer (tokenized without a leading space), so
 * its probability is the next-token probability of that token (and of its spelling with a leading space), read at
 * once. Candidates the vocabulary splits (or that two labels would share a token for) are left out.
 *
 * Pairs are every letter label followed by every digit label, kept when the vocabulary writes the two characters as
 * exactly those two tokens (not one merged token, which would take the mass): all two tokens long, so none is a prefix
 * of another either. Ordered letter by letter (`A0`-`A9`, `B0`...), so that a question with few more options than the
 * singles needs few letters (each letter the question uses costs one more token evaluated).
 */
export function decisionLabels<Token extends number>(tokenizer: LabelTokenizer<Token>): DecisionLabels<Token> {
    const singles: DecisionLabel<Token>[] = [];
    const used = new Set<Token>();
    for (const text of candidates) {
        const tokens = tokenizer.atStart(text);
        if (tokens.length !== 1 || used.has(tokens[0]))
            continue;
        const spaced = tokenizer.variants(text)
            .filter((variant) => variant.length === 1 && !used.has(variant[0]) && variant[0] !== tokens[0])
            .map(([token]) => token);
        const all = [...new Set([tokens[0], ...spaced])];
        all.forEach((token) => used.add(token));
        singles.push({text, token: tokens[0], tokens: all});
    }
    const digits = singles.filter((label) => /^[0-9]$/.test(label.text));
    const pairs = singles.filter((label) => /^[A-Za-z]$/.test(label.text)).flatMap((first) => digits
        .filter((digit) => sameTokens(tokenizer.atStart(first.text + digit.text), [first.token, digit.token]))
        .map((digit) => ({text: first.text + digit.text, first, second: digit.token})));
    return {singles, pairs};
}

function sameTokens(a: readonly number[], b: readonly number[]) {
    return a.length === b.length && a.every((token, index) => token === b[index]);
}
