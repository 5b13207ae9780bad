import type { LlamaContextSequence, Token } from "node-llama-cpp";
import { copySequenceState } from "../../../runtimes/llama/internals.js";
import { promptChunks } from "./promptChunks.js";
import { reusePromptPrefix } from "./reusePromptPrefix.js";
import { commonPrefixLength } from "./SequencePrefixCache.js";

/** Prompt tokens a copy must save over what the sequence keeps already: fewer are evaluated as quickly as copied. */
export const minCopiedTokens = 64;

/**
 * A prompt's tokens evaluated once per context rather than once per sequence: their KV cells are copied from the
 * sequence that holds them (llama.cpp's `llama_memory_seq_cp`, through node-llama-cpp 3.22's sequence copy) into the
 * sequence that needs them, which then evaluates only what follows.
 * - `fromOthers`: a request whose prompt shares more (by minCopiedTokens) with another sequence of the context, busy
 *   with another request or free, than with the one it took: parallel requests with one long system prompt (a coding
 *   agent's, a team's) evaluate it once, not once per sequence.
 * - `spread`: the choices of one request (`n` > 1, `best_of`): the first evaluates the prompt, the others copy it.
 * The copy takes the context's lock (it waits for the batch being decoded, and the next batch waits for it); with
 * node-llama-cpp's per-sequence KV streams it copies the source's whole stream (its context size's cells), which
 * costs far less than evaluating more than a few dozen tokens. Only for models whose sequences need no checkpoints
 * (not sliding-window, hybrid or recurrent ones: `supported`).
 */
export class PrefixCopies {
    /** Prompt tokens copied so far (the `los_prompt_cache_copied_tokens_total` metric). */
    copiedTokens = 0;

    constructor(private readonly sequences: readonly LlamaContextSequence[]) {}

    static supported(sequence: LlamaContextSequence): boolean {
        return !sequence.needsCheckpoints;
    }

    /**
     * `target` keeps `kept` tokens of `prompt`: when another sequence shares at least minCopiedTokens more, its cells
     * up to there are copied in. Returns the prompt tokens `target` keeps then (0 when a copy failed: it is emptied; fewer
     * when the other sequence's request erased some before the copy).
     */
    async fromOthers(target: LlamaContextSequence, kept: number, prompt: readonly Token[]): Promise<number> {
        let best: {source: LlamaContextSequence, shared: number} | null = null;
        for (const source of this.sequences) {
            if (source === target)
                continue;
            const shared = Math.min(commonPrefixLength(source.contextTokens, prompt), prompt.length - 1);
            if (shared > (best?.shared ?? kept))
                best = {source, shared};
        }
        if (best == null || best.shared - kept < minCopiedTokens)
            return kept;
        await this.copy(target, best.source, best.shared);
        return Math.min(commonPrefixLength(target.contextTokens, prompt), prompt.length - 1);
    }

    /**
     * The choices of one request: the first (`first`, keeping `kept[0]` tokens) evaluates the prompt but its last token,
     * in chunks of `chunkSize` (`signal` is checked between them), and each other sequence that keeps fewer tokens by
     * minCopiedTokens copies them. Returns the tokens each keeps then, in order.
     */
    async spread(taken: readonly {sequence: LlamaContextSequence, kept: number}[], prompt: readonly Token[], chunkSize: number, signal: AbortSignal): Promise<number[]> {
        const [first, ...others] = taken;
        const shared = prompt.length - 1;
        if (!others.some(({kept}) => shared - kept >= minCopiedTokens))
            return taken.map(({kept}) => kept);
        await evaluatePrefix(first.sequence, prompt, first.kept, shared, chunkSize, signal);
        const kept = [shared];
        for (const other of others) {
            signal.throwIfAborted();
            if (shared - other.kept < minCopiedTokens)
                kept.push(other.kept);
            else
                kept.push(await this.copy(other.sequence, first.sequence, shared));
        }
        return kept;
    }

    /** Copies up to `tokens` of `source` into `target`; how many it holds then. */
    private async copy(target: LlamaContextSequence, source: LlamaContextSequence, tokens: number): Promise<number> {
        const held = await copySequenceState(target, source, tokens);
        this.copiedTokens += held;
        return held;
    }
}

/** `sequence` keeps `prompt`'s first `from` tokens (the rest it holds is erased): evaluates them up to `to`, a chunk at a time. */
async function evaluatePrefix(sequence: LlamaContextSequence, prompt: readonly Token[], from: number, to: number, chunkSize: number, signal: AbortSignal) {
    await reusePromptPrefix(sequence, from);
    if (from >= to)
        return;
    for (const chunk of promptChunks(to, from, chunkSize)) {
        signal.throwIfAborted();
        await sequence.evaluateWithoutGeneratingNewTokens(prompt.slice(chunk.start, chunk.end));
    }
}
