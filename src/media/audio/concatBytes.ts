/** Joins byte chunks into one array (the encoders collect a callback's pieces this way). */
export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array {
    if (chunks.length === 1) return chunks[0];
    let length = 0;
    for (const chunk of chunks) length += chunk.length;
    const out = new Uint8Array(length);
    let offset = 0;
    for (const chunk of chunks) {
        out.set(chunk, offset);
        offset += chunk.length;
    }
    return out;
}
