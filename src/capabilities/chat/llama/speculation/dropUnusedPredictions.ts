import type { LlamaContextSequence } from "node-llama-cpp";

/**
 * Removes what a speculative step verified beyond the tokens the generation used (it stopped at a stop
 * sequence, the token limit or an abort before it had used them). node-llama-cpp keeps such tokens in the
 * sequence, outside `contextTokens` and `nextTokenIndex`, until its next evaluation; the prompt cache must
 * see the sequence as exactly what it reports. Erasing from `nextTokenIndex` is node-llama-cpp's own way:
 * an erase that reaches the loaded predictions removes all of them. Nothing happens when there are none.
 */
export async function dropUnusedPredictions(sequence: LlamaContextSequence): Promise<void> {
    const end = sequence.nextTokenIndex;
    await sequence.eraseContextTokenRanges([{start: end, end: end + 1}]);
}
