import type { Tensor } from "@huggingface/transformers";

/** What the draw keeps, in llama.cpp's order: the `topK` best (0 = all), then the fewest whose probability (at temperature 1) reaches `topP`. */
export type SamplerFilters = {topK?: number, topP?: number};

/**
 * Sampling at `temperature` with a seeded generator (mulberry32), as the last logits processor of a
 * greedy generation: it draws a token from the softmax of the final scores (after Whisper's timestamp
 * rules, a chat request's logit bias and penalties) and leaves only that token possible. transformers.js's own
 * sampler draws from `Math.random`, so the same request would give another text each time; with this one a window
 * is decoded the same way every time (the seed is derived from the window and the attempt).
 *
 * `filters` narrow the draw as llama.cpp's sampler chain does (node-llama-cpp: top-k, top-p, then the temperature and
 * the draw): top-p's probabilities are those of the scores as they come (before the temperature), at least one token
 * kept. Without filters (transcription) nothing is sorted and the draw is the same as it always was.
 */
export function seededSampler(temperature: number, seed: number, filters: SamplerFilters = {}): (ids: bigint[][], logits: Tensor) => Tensor {
    let state = seed >>> 0;
    const next = () => {
        state = (state + 0x6D2B79F5) >>> 0;
        let value = Math.imul(state ^ (state >>> 15), 1 | state);
        value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
        return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
    };
    const topK = filters.topK ?? 0, topP = filters.topP ?? 1;
    const filtered = topK > 0 || topP < 1;
    return (_ids, logits) => {
        const vocabulary = logits.dims.at(-1)!;
        const data = logits.data as Float32Array;
        for (let row = 0; row * vocabulary < data.length; row++) {
            const scores = data.subarray(row * vocabulary, (row + 1) * vocabulary);
            if (filtered)
                keepBest(scores, topK, topP);
            let max = -Infinity;
            for (const score of scores)
                if (score > max) max = score;
            if (max === -Infinity)
                continue;
            const weights = new Float64Array(vocabulary);
            let total = 0;
            scores.forEach((score, index) => {
                weights[index] = score === -Infinity ? 0 : Math.exp((score - max) / temperature);
                total += weights[index];
            });
            let target = next() * total;
            let chosen = scores.indexOf(max);
            for (let index = 0; index < vocabulary; index++) {
                if (weights[index] === 0)
                    continue;
                target -= weights[index];
                chosen = index;
                if (target < 0)
                    break;
            }
            scores.fill(-Infinity);
            scores[chosen] = 0;
        }
        return logits;
    };
}

/** Sets to -Infinity every score top-k and then top-p leave out (llama.cpp's `top_k` and `top_p` samplers, min_keep 1). */
function keepBest(scores: Float32Array, topK: number, topP: number) {
    const order = [...scores.keys()].filter((index) => scores[index] !== -Infinity).sort((a, b) => scores[b] - scores[a] || a - b);
    let kept = topK > 0 ? Math.min(topK, order.length) : order.length;
    if (topP < 1 && kept > 0) {
        const max = scores[order[0]];
        let total = 0;
        for (let index = 0; index < kept; index++)
            total += Math.exp(scores[order[index]] - max);
        let sum = 0;
        for (let index = 0; index < kept; index++) {
            sum += Math.exp(scores[order[index]] - max) / total;
            if (sum >= topP) {
                kept = index + 1;
                break;
            }
        }
    }
    for (let index = kept; index < order.length; index++)
        scores[order[index]] = -Infinity;
}
