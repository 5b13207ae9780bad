export type PromptChunk = {start: number, end: number};

/**
 * The pieces a prompt of `length` tokens is evaluated in, after its first `kept` tokens were reused
 * from the KV cache. The grid is fixed from the start of the prompt: chunks of `size`, the last one
 * the remainder (it goes to the generator, whose first sample is the first completion token); a
 * reused prefix only removes the chunks (or the start of the chunk) it covers.
 *
 * llama.cpp's CPU matrix products take a different path for a batch of one row than for many, so a
 * token's activations can differ in the last bits with the size of its batch. With the grid fixed,
 * a prefix that ends on a chunk boundary leaves every later batch exactly as a cache miss would
 * evaluate it (the `exact` prompt cache relies on this).
 * `kept` < `length`: at least the last prompt token is evaluated.
 */
export function promptChunks(length: number, kept: number, size: number): PromptChunk[] {
    if (kept >= length)
        throw new RangeError(`At least the last prompt token must be evaluated (kept ${kept} of ${length})`);
    const chunks: PromptChunk[] = [];
    for (let start = Math.floor(kept / size) * size; start < length; start += size)
        chunks.push({start: Math.max(start, kept), end: Math.min(length, start + size)});
    return chunks;
}

/** The tokens of a prompt of `length` that were evaluated in whole chunks of `size` on promptChunks's grid. */
export function wholeChunkTokens(length: number, size: number) {
    return Math.floor(length / size) * size;
}
