export type PromptChunk = {start: number, end: number};

/**
 * The pieces a prompt of `length` tokens is evaluated in, after its first `kept` tokens were reused
 * from the KV cache: chunks of `size` from the start of the prompt, the last one ending the prompt
 * (it goes to the generator, whose first sample is the first completion token).
 *
 * The boundaries are those of the whole prompt evaluated from scratch, whatever `kept` is: a
 * reused prefix only removes the chunks (or the start of the chunk) it covers. llama.cpp may
 * compute a token's activations differently depending on how many tokens share its batch, so
 * keeping the boundaries keeps every batch after the prefix as it would have been on a miss.
 * `kept` < `length`: at least the last prompt token is evaluated.
 */
export function promptChunks(length: number, kept: number, size: number): PromptChunk[] {
    if (kept >= length)
        throw new RangeError(`At least the last prompt token must be evaluated (kept ${kept} of ${length})`);
    const lastStart = Math.max(0, length - size);
    const boundaries: number[] = [];
    for (let start = 0; start < lastStart; start += size)
        boundaries.push(start);
    boundaries.push(lastStart, length);
    const chunks: PromptChunk[] = [];
    for (let index = 0; index + 1 < boundaries.length; index++) {
        const start = Math.max(boundaries[index], kept);
        const end = boundaries[index + 1];
        if (start < end)
            chunks.push({start, end});
    }
    return chunks;
}
