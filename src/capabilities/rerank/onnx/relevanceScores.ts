/**
 * A cross-encoder's logits [batch, labels] as relevance scores 0 to 1: one label is a relevance logit (sigmoid, as
 * sentence-transformers' CrossEncoder and llama.cpp's rerankers), two are [irrelevant, relevant] (the softmax's
 * second). More labels are a classifier, not a reranker: refused.
 */
export function relevanceScores(logits: Float32Array, dims: readonly number[]): Float32Array {
    const [batch, labels] = dims;
    if (labels === 1)
        return Float32Array.from(logits.subarray(0, batch), sigmoid);
    if (labels === 2)
        return Float32Array.from({length: batch}, (_, b) => sigmoid(logits[b * 2 + 1] - logits[b * 2]));
    throw new Error(`A reranker's head has 1 or 2 labels; this model's has ${labels} (a text classifier?)`);
}

/** 1 / (1 + e^-x), computed so large |x| neither overflows nor loses the small side. */
export function sigmoid(x: number): number {
    return x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x));
}
