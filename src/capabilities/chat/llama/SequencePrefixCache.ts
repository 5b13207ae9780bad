import type { Token } from "node-llama-cpp";

/** What the cache needs of a context sequence: the tokens its KV cache holds. */
export type CachedSequence = {readonly contextTokens: readonly Token[]};

export type PromptCacheStats = {
    enabled: boolean;
    /** Choices whose prompt was looked up (one per sequence a request used). */
    lookups: number;
    /** Of those, choices that reused at least one token. */
    hits: number;
    /** Prompt tokens looked up, and how many of them were reused instead of evaluated. */
    promptTokens: number;
    cachedTokens: number;
};

/**
 * The free sequences of one context, each still holding the tokens it last evaluated (prompt and
 * generated text) after its request ended, as llama-server keeps its slots. A request takes the
 * free sequences whose tokens share the longest prefix with its prompt (ties: the one used least
 * recently, so a busy conversation does not evict an idle one sooner than needed); the caller then
 * evaluates only the rest of the prompt (see reusePromptPrefix.ts).
 *
 * With the cache off, sequences are handed out in the same least-recently-used order and the caller
 * clears them.
 */
export class SequencePrefixCache<S extends CachedSequence> {
    private readonly lastUsed = new Map<S, number>();
    private clock = 0;
    private readonly counters = {lookups: 0, hits: 0, promptTokens: 0, cachedTokens: 0};

    constructor(sequences: readonly S[], readonly enabled: boolean) {
        for (const sequence of sequences)
            this.lastUsed.set(sequence, this.clock++);
    }

    get freeCount() {
        return this.lastUsed.size;
    }

    /** Takes `count` free sequences for `prompt`, best first. The caller must have reserved them (AdmissionQueue). */
    take(prompt: readonly Token[], count: number): S[] {
        if (count > this.lastUsed.size)
            throw new RangeError(`${count} sequences asked for, ${this.lastUsed.size} free`);
        const ranked = [...this.lastUsed].map(([sequence, lastUsed]) => ({
            sequence, lastUsed, shared: this.enabled ? commonPrefixLength(sequence.contextTokens, prompt) : 0
        }));
        ranked.sort((a, b) => b.shared - a.shared || a.lastUsed - b.lastUsed);
        const taken = ranked.slice(0, count).map((entry) => entry.sequence);
        for (const sequence of taken)
            this.lastUsed.delete(sequence);
        return taken;
    }

    /** A sequence is free again, keeping its tokens for the next request. */
    giveBack(sequence: S) {
        this.lastUsed.set(sequence, this.clock++);
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
        return {enabled: this.enabled, ...this.counters};
    }
}

export function commonPrefixLength(a: readonly Token[], b: readonly Token[]) {
    const length = Math.min(a.length, b.length);
    let index = 0;
    while (index < length && a[index] === b[index])
        index++;
    return index;
}
