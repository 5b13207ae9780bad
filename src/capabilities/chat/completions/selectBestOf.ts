import type { ChoiceResult } from "../ChatEngine.js";

/**
 * OpenAI's `best_of`: of the candidates, the `n` with the highest log probability per token (the
 * mean of their tokens' logprobs; a candidate without tokens counts as 0, certain), best first,
 * renumbered 0..n-1. Ties keep the candidates' order.
 */
export function selectBestOf(candidates: readonly ChoiceResult[], n: number): ChoiceResult[] {
    const scored = [...candidates]
        .sort((a, b) => a.index - b.index)
        .map((choice) => ({choice, score: meanLogprob(choice)}));
    return scored
        .sort((a, b) => b.score - a.score)
        .slice(0, n)
        .map(({choice}, index) => ({...choice, index}));
}

function meanLogprob(choice: ChoiceResult) {
    const entries = choice.logprobs ?? [];
    return entries.length === 0 ? 0 : entries.reduce((sum, entry) => sum + entry.logprob, 0) / entries.length;
}
