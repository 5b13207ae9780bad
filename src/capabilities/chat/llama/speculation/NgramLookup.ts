import type { Token } from "node-llama-cpp";

export type NgramLookupOptions = {
    /** The shortest suffix that may be matched (tokens); shorter matches propose too often in vain. */
    minNgram: number;
    /** The longest suffix tried first. */
    maxNgram: number;
};

/**
 * Prompt-lookup drafting (as llama.cpp's `ngram` lookup and "prompt lookup decoding"): the tokens that followed
 * the most recent earlier occurrence of the text's last n tokens, longest n first. The text is the whole
 * sequence (prompt and what was generated so far), so a model that quotes its prompt or repeats itself is
 * drafted from. Indexed incrementally: pushing a token costs one map update per n, a lookup one map read per n.
 */
export class NgramLookup {
    private tokens: Token[] = [];
    /**
     * Per n: the n-gram's hash -> the end (exclusive) of its latest occurrence that is not the current suffix. A
     * hash collision is checked against the tokens (and is then only a missed draft).
     */
    private readonly ends: Map<number, number>[];

    constructor(private readonly options: NgramLookupOptions) {
        if (!(options.minNgram >= 1 && options.maxNgram >= options.minNgram))
            throw new Error(`Invalid n-gram lengths ${options.minNgram}..${options.maxNgram}`);
        this.ends = Array.from({length: options.maxNgram + 1}, () => new Map());
    }

    get length() {
        return this.tokens.length;
    }

    /** The text indexed so far (the sequence's tokens). */
    get text(): readonly Token[] {
        return this.tokens;
    }

    reset(tokens: readonly Token[]) {
        this.tokens = [];
        for (const map of this.ends)
            map.clear();
        this.push(tokens);
    }

    push(tokens: readonly Token[]) {
        for (const token of tokens) {
            // The suffixes ending here stop being the suffix: index them before the text grows.
            this.indexSuffixes();
            this.tokens.push(token);
        }
    }

    /** The longest suffix (its length `n`) that occurred before, and where that occurrence ends; null when none did. */
    match(): {n: number, end: number} | null {
        const {minNgram, maxNgram} = this.options;
        const length = this.tokens.length;
        for (let n = Math.min(maxNgram, length); n >= minNgram; n--) {
            const end = this.ends[n].get(this.hash(length - n, length));
            if (end != null && this.same(end - n, length - n, n))
                return {n, end};
        }
        return null;
    }

    /**
     * Up to `maxTokens` tokens that followed the longest suffix's latest earlier occurrence; empty when there is
     * none. An occurrence close to the end (text repeating with a short period) is continued with the draft's own
     * tokens, as the repetition would go on.
     */
    draft(maxTokens: number, match = this.match()): Token[] {
        if (match == null)
            return [];
        const draft: Token[] = [];
        const length = this.tokens.length;
        for (let position = match.end; draft.length < maxTokens; position++)
            draft.push(position < length ? this.tokens[position] : draft[position - length]);
        return draft;
    }

    private indexSuffixes() {
        const length = this.tokens.length;
        for (let n = this.options.minNgram; n <= Math.min(this.options.maxNgram, length); n++)
            this.ends[n].set(this.hash(length - n, length), length);
    }

    /** FNV-1a over the token ids of [start, end). */
    private hash(start: number, end: number) {
        let hash = 0x811c9dc5;
        for (let index = start; index < end; index++)
            hash = Math.imul(hash ^ this.tokens[index], 0x01000193) >>> 0;
        return hash;
    }

    private same(a: number, b: number, n: number) {
        for (let offset = 0; offset < n; offset++)
            if (this.tokens[a + offset] !== this.tokens[b + offset])
                return false;
        return true;
    }
}
