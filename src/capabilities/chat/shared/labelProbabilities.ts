import type { DecisionLabel, DecisionLabelPair } from "./decisionLabels.js";

/** A next-token distribution as a function: a token's probability (the model's own softmax, no sampling transformation). */
export type NextToken<Token extends number> = (token: Token) => number;

/**
 * The probabilities of a question's labels as shown (in label order), from the model's next-token distribution after
 * the question (`next`): a single-token label's is the sum over its spellings' tokens. A pair's is its first label's,
 * times its digit's as the next token after the first label's own token (`afterFirst`, asked once per first label the
 * question uses). Either chat engine's: each reads its distributions its own way.
 */
export async function labelProbabilities<Token extends number>(shown: readonly DecisionLabel<Token>[] | readonly DecisionLabelPair<Token>[],
    next: NextToken<Token>, afterFirst: (first: DecisionLabel<Token>) => Promise<NextToken<Token>>): Promise<number[]> {
    const of = (label: DecisionLabel<Token>) => label.tokens.reduce((sum, token) => sum + next(token), 0);
    if (!isPairs(shown))
        return shown.map(of);
    const after = new Map<DecisionLabel<Token>, NextToken<Token>>();
    for (const {first} of shown)
        if (!after.has(first))
            after.set(first, await afterFirst(first));
    return shown.map(({first, second}) => of(first) * after.get(first)!(second));
}

function isPairs<Token extends number>(labels: readonly DecisionLabel<Token>[] | readonly DecisionLabelPair<Token>[]): labels is readonly DecisionLabelPair<Token>[] {
    return labels.length > 0 && "second" in labels[0];
}
