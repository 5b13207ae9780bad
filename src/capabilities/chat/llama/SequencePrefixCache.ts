import type { Token } from "node-llama-cpp";

/** What the cache needs of a context sequence: the tokens its KV cache holds. */
export type CachedSequence = {readonly contextTokens: readonly Token[]};

/**
 * `on`: every token a prompt shares with a sequence is reused. `exact`: only whole chunks of the
 * prompt-evaluation grid (promptChunks.ts) that the sequence evaluated as whole prompt chunks, so
 * every batch after them is the one a cache miss would evaluate. `off`: nothing.
 */
export type PromptCacheMode = "on" | "exact" | "off";

export type PromptCacheStats = {
    mode: PromptCacheMode;
    /** Choices whose prompt was looked up (one per sequence a request used). */
    lookups: number;
    /** Of those, choices that reused at least one token. */
    hits: number;
    /** Prompt tokens looked up, and how many of them were reused instead of evaluated. */
    promptTokens: number;
    cachedTokens: number;
};

export type TakenSequence<S> = {sequence: S, /** Prompt tokens whose KV cache it keeps. */ kept: number};

/** Shared prompt tokens that make a sequence worth taking over another (fewer: a template's opening, not a conversation). */
export const minSharedPrefix = 32;

/**
 * The free sequences of one context, each still holding the tokens it last evaluated (prompt and
 * generated text) after its request ended, as llama-server keeps its slots. A request takes the
 * free sequences that can keep the most of its prompt (ties: the one used least recently, so a busy
 * conversation does not evict an idle one sooner than needed); the caller erases the rest and
 * evaluates only what follows (reusePromptPrefix.ts). At least the last prompt token is always
 * evaluated again: its logits give the first completion token.
 *
 * With the cache off, sequences are handed out in the same least-recently-used order, kept = 0.
 */
export class SequencePrefixCache<S extends CachedSequence> {
    private readonly lastUsed = new Map<S, number>();
    /** `exact` mode: per sequence, the leading tokens it evaluated in whole prompt chunks. */
    private readonly wholeChunks = new Map<S, number>();
    private clock = 0;
    private readonly counters = {lookups: 0, hits: 0, promptTokens: 0, cachedTokens: 0};

    /** `minShared`: the shared prompt tokens that make a sequence worth taking over an emptier one (minSharedPrefix). */
    constructor(sequences: readonly S[], readonly mode: PromptCacheMode, private readonly chunkSize: number, private readonly minShared = minSharedPrefix) {
        for (const sequence of sequences)
            this.lastUsed.set(sequence, this.clock++);
    }

    /** Takes `count` free sequences for `prompt`, best first. The caller must have reserved them (AdmissionQueue). */
    take(prompt: readonly Token[], count: number): TakenSequence<S>[] {
        if (count > this.lastUsed.size)
            throw new RangeError(`${count} sequences asked for, ${this.lastUsed.size} free`);
        const ranked = [...this.lastUsed].map(([sequence, lastUsed]) => ({sequence, lastUsed, kept: this.keepable(sequence, prompt)}));
        // A few shared tokens (a chat template's opening) are not worth pushing another conversation out for: below
        // `minShared` they rank as none, so an empty or the least recently used sequence is taken first; a short prompt
        // shared whole still counts.
        const enough = Math.min(this.minShared, prompt.length - 1);
        const worth = (kept: number) => kept >= enough ? kept : 0;
        ranked.sort((a, b) => worth(b.kept) - worth(a.kept) || a.lastUsed - b.lastUsed);
        const taken = ranked.slice(0, count);
        for (const {sequence} of taken)
            this.lastUsed.delete(sequence);
        return taken.map(({sequence, kept}) => ({sequence, kept}));
    }

    /**
     * A sequence is free again, keeping its tokens for the next request. `wholeChunkTokens`: its
     * leading tokens that were evaluated in whole chunks of the prompt grid, alone in their batches
     * (0 when unsure).
     */
    giveBack(sequence: S, wholeChunkTokens: number) {
        this.lastUsed.set(sequence, this.clock++);
        this.wholeChunks.set(sequence, wholeChunkTokens);
    }

    /** The free sequences, most recently used first, each with its `wholeChunkTokens` (for saving the cache to disk: SavedPromptStates). */
    recentFirst(): {sequence: S, wholeChunkTokens: number}[] {
        return [...this.lastUsed].sort(([, a], [, b]) => b - a)
            .map(([sequence]) => ({sequence, wholeChunkTokens: this.wholeChunks.get(sequence) ?? 0}));
    }

    /** Counts one choice's prompt: `cached` of its `prompt` tokens were reused. */
    record(prompt: number, cached: number) {
        this.counters.lookups++;
        this.counters.promptTokens += prompt;
        this.counters.cachedTokens += cached;
        if (cached > 0)
            this.counters.hits++;
    }

    stats(): PromptCacheStats {
        return {mode: this.mode, ...this.counters};
    }

    private keepable(sequence: S, prompt: readonly Token[]) {
        if (this.mode === "off" || prompt.length === 0)
            return 0;
        const shared = Math.min(commonPrefixLength(sequence.contextTokens, prompt), prompt.length - 1);
        if (this.mode === "on")
            return shared;
        return Math.min(Math.floor(shared / this.chunkSize) * this.chunkSize, this.wholeChunks.get(sequence) ?? 0);
    }
}

/** How many leading tokens `a` and `b` share. */
export function commonPrefixLength(a: readonly Token[], b: readonly Token[]) {
    const length = Math.min(a.length, b.length);
    let index = 0;
    while (index < length && a[index] === b[index])
        index++;
    return index;
}
