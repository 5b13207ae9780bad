import type { Token } from "node-llama-cpp";

/** Slots of a pool: 8 bytes each (llama.cpp's ngram-mod has 4 Mi of 4 bytes). */
const defaultSlots = 1 << 20;
/** Past this share of slots in use, collisions start to cost drafts: the pool is emptied and starts again (as ngram-mod does). */
const maxOccupancy = 0.25;
const empty = -1;

/**
 * What a model's sequences wrote and read before, across requests: for each run of `n` tokens (hashed), the token that
 * followed it last (as llama.cpp's `ngram-mod`: a fixed table, no tokens kept; here with a second hash of the run
 * beside it, so that a run never seen is not taken for one that was, but for one chance in 2^32). A generation whose
 * last `n` tokens were seen before, in another request's prompt or answer, is drafted by chaining it: the request asked
 * again ("regenerate"), an agent writing out again a file an earlier turn wrote. Shared by every sequence of one model;
 * bounded (8 bytes a slot, emptied at a quarter full).
 */
export class NgramPool {
    private readonly entries: Int32Array;
    private readonly checks: Int32Array;
    private used = 0;

    constructor(readonly n: number, slots = defaultSlots) {
        this.entries = new Int32Array(slots).fill(empty);
        this.checks = new Int32Array(slots);
    }

    /** Every run of `n` tokens of `tokens` that ends at or after `from + n` and has a token after it, with that token. */
    add(tokens: readonly Token[], from = 0) {
        for (let start = Math.max(0, from); start + this.n < tokens.length; start++) {
            const [slot, check] = this.hash(tokens, start);
            if (this.entries[slot] === empty)
                this.used++;
            this.entries[slot] = tokens[start + this.n];
            this.checks[slot] = check;
        }
        if (this.used > maxOccupancy * this.entries.length) {
            this.entries.fill(empty);
            this.used = 0;
        }
    }

    /**
     * Up to `maxTokens` tokens chained from the pool after `tokens`' last `n`: the token that followed them, then the
     * one that followed the window moved by one, and so on; fewer where a window was never seen.
     */
    draft(tokens: readonly Token[], maxTokens: number): Token[] {
        if (tokens.length < this.n)
            return [];
        const window = tokens.slice(tokens.length - this.n);
        const draft: Token[] = [];
        while (draft.length < maxTokens) {
            const [slot, check] = this.hash(window, window.length - this.n);
            const next = this.entries[slot];
            if (next === empty || this.checks[slot] !== check)
                break;
            draft.push(next as Token);
            window.push(next as Token);
        }
        return draft;
    }

    /** The slot of the `n` tokens from `start`, and their check: two FNV-1a hashes of different seeds, each mixed (murmur3's finalizer). */
    private hash(tokens: readonly Token[], start: number): [slot: number, check: number] {
        let a = 0x811c9dc5, b = 0x01000193;
        for (let index = start; index < start + this.n; index++) {
            a = Math.imul(a ^ tokens[index], 0x01000193);
            b = Math.imul(b ^ tokens[index], 0x5bd1e995);
        }
        return [mix(a) % this.entries.length, mix(b) | 0];
    }
}

function mix(hash: number): number {
    hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
    hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
    return (hash ^ (hash >>> 16)) >>> 0;
}
