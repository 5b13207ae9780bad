import type { LlamaContextSequence } from "node-llama-cpp";

/**
 * Erases everything `sequence` holds after its first `kept` tokens (the prompt prefix whose KV
 * cache is reused, as SequencePrefixCache chose), or all of it when `kept` is 0.
 */
export async function reusePromptPrefix(sequence: LlamaContextSequence, kept: number): Promise<void> {
    if (kept === 0)
        await sequence.clearHistory();
    else if (sequence.nextTokenIndex > kept)
        await sequence.eraseContextTokenRanges([{start: kept, end: sequence.nextTokenIndex}]);
}
