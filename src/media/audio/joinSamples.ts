/** Runs of samples as one, copied once (concatSamples pairwise would copy a long list over and over). */
export function joinSamples(parts: readonly Float32Array[]): Float32Array {
    const out = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0));
    let offset = 0;
    for (const part of parts) {
        out.set(part, offset);
        offset += part.length;
    }
    return out;
}
