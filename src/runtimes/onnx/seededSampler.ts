import type { Tensor } from "@huggingface/transformers";

/**
 * Sampling at `temperature` with a seeded generator (mulberry32), as the last logits processor of a
 * greedy generation: it draws a token from the softmax of the final scores (after Whisper's timestamp
 * rules) and leaves only that token possible. transformers.js's own sampler draws from `Math.random`,
 * so the same request would give another text each time; with this one a window is decoded the same
 * way every time (the seed is derived from the window and the attempt).
 */
export function seededSampler(temperature: number, seed: number): (ids: bigint[][], logits: Tensor) => Tensor {
    let state = seed >>> 0;
    const next = () => {
        state = (state + 0x6D2B79F5) >>> 0;
        let value = Math.imul(state ^ (state >>> 15), 1 | state);
        value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
        return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
    };
    return (_ids, logits) => {
        const vocabulary = logits.dims.at(-1)!;
        const data = logits.data as Float32Array;
        for (let row = 0; row * vocabulary < data.length; row++) {
            const scores = data.subarray(row * vocabulary, (row + 1) * vocabulary);
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
