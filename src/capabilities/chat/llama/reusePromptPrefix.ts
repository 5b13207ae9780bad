import type { LlamaContextSequence, Token } from "node-llama-cpp";
import { commonPrefixLength } from "./SequencePrefixCache.js";

/**
 * Prepares `sequence` for `prompt`: keeps the KV cache of the longest prefix it shares with the
 * tokens the sequence holds (when `reuse`), erases everything after it, and returns how many prompt
 * tokens are kept. At least the last prompt token is always evaluated again: its logits give the
 * first completion token, and llama.cpp keeps logits only for the last batch.
 */
export async function reusePromptPrefix(sequence: LlamaContextSequence, prompt: readonly Token[], reuse: boolean): Promise<number> {
    const kept = reuse ? Math.min(commonPrefixLength(sequence.contextTokens, prompt), prompt.length - 1) : 0;
    if (kept === 0)
        await sequence.clearHistory();
    else if (sequence.nextTokenIndex > kept)
        await sequence.eraseContextTokenRanges([{start: kept, end: sequence.nextTokenIndex}]);
    return kept;
}
