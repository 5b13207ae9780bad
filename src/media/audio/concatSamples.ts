/** Two runs of samples as one. */
export function concatSamples(first: Float32Array, second: Float32Array): Float32Array {
    const out = new Float32Array(first.length + second.length);
    out.set(first);
    out.set(second, first.length);
    return out;
}
