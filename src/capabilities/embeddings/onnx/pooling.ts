/**
 * Pooling and normalisation of embedding vectors: small pure functions, shared by the ONNX worker
 * and the GGUF engine, tested without a model.
 */
export const poolingModes = ["mean", "cls", "none"] as const;
export type Pooling = typeof poolingModes[number];

/**
 * Pools a [batch, sequence, hidden] hidden state (row-major) into one vector per sequence.
 * `lengths[b]` real tokens come first in row b, padding after them (right padding).
 * mean: average of the real tokens; cls: the first token.
 */
export function poolHiddenStates(data: Float32Array, dims: readonly number[], lengths: readonly number[], pooling: Exclude<Pooling, "none">): Float32Array[] {
    const [batch, sequence, hidden] = dims;
    if (batch !== lengths.length || data.length !== batch * sequence * hidden)
        throw new Error(`Hidden state of shape [${dims.join(", ")}] does not match ${lengths.length} sequences`);
    const vectors: Float32Array[] = [];
    for (let b = 0; b < batch; b++) {
        const vector = new Float32Array(hidden);
        const rowStart = b * sequence * hidden;
        if (pooling === "cls") {
            vector.set(data.subarray(rowStart, rowStart + hidden));
        } else {
            const length = lengths[b];
            // Sums in float64, like PyTorch's mean over float32 is close to, then one rounding.
            const sums = new Float64Array(hidden);
            for (let s = 0; s < length; s++) {
                const offset = rowStart + s * hidden;
                for (let h = 0; h < hidden; h++)
                    sums[h] += data[offset + h];
            }
            for (let h = 0; h < hidden; h++)
                vector[h] = length === 0 ? 0 : sums[h] / length;
        }
        vectors.push(vector);
    }
    return vectors;
}

/** Splits an already pooled [batch, hidden] output into vectors. */
export function splitRows(data: Float32Array, dims: readonly number[]): Float32Array[] {
    const [batch, hidden] = dims;
    return Array.from({length: batch}, (_, b) => data.slice(b * hidden, (b + 1) * hidden));
}

/** The vector scaled to Euclidean length 1 (a zero vector stays zero). */
export function l2Normalize(vector: Float32Array): Float32Array {
    let sum = 0;
    for (const value of vector)
        sum += value * value;
    const norm = Math.sqrt(sum);
    if (norm === 0 || !Number.isFinite(norm))
        return Float32Array.from(vector);
    return vector.map((value) => value / norm);
}

/**
 * The vector a client receives: truncated to `dimensions` (Matryoshka), then L2-normalised when
 * the model's vectors are normalised (truncating a unit vector would shorten it).
 */
export function finishVector(vector: Float32Array, options: {dimensions?: number | null, normalize: boolean}): Float32Array {
    const truncated = options.dimensions != null && options.dimensions < vector.length ? vector.subarray(0, options.dimensions) : vector;
    return options.normalize ? l2Normalize(truncated) : Float32Array.from(truncated);
}
