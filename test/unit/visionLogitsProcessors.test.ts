import type { Tensor } from "@huggingface/transformers";
import { describe, expect, it } from "vitest";
import { logitBiasProcessor, penaltiesProcessor, RawLogitsTap } from "../../src/capabilities/chat/vision/onnx/chatLogitsProcessors.js";
import { seededSampler } from "../../src/runtimes/onnx/seededSampler.js";

// The vision engine's logits processors and the seeded sampler's filters, on logits of a few tokens.
const logits = (values: number[]) => ({data: Float32Array.from(values), dims: [1, values.length]}) as unknown as Tensor;
const scoresOf = (tensor: Tensor) => [...tensor.data as Float32Array];

describe("seededSampler's filters (llama.cpp's order: top-k, top-p at temperature 1, then the temperature and the draw)", () => {
    const drawn = (filters: {topK?: number, topP?: number}, temperature: number, values: number[]) => {
        const sampler = seededSampler(temperature, 9, filters);
        return new Set(Array.from({length: 2000}, () => scoresOf(sampler([], logits(values))).indexOf(0)));
    };
    const probabilities = [0.5, 0.3, 0.15, 0.05].map(Math.log);

    it("top_k keeps the k most likely", () => {
        expect(drawn({topK: 2}, 1, probabilities)).toEqual(new Set([0, 1]));
        expect(drawn({topK: 1}, 2, probabilities)).toEqual(new Set([0]));
    });

    it("top_p keeps the fewest whose probability reaches it, read before the temperature (a high temperature keeps the same set)", () => {
        expect(drawn({topP: 0.8}, 1, probabilities)).toEqual(new Set([0, 1]));
        expect(drawn({topP: 0.8}, 2, probabilities)).toEqual(new Set([0, 1]));
        expect(drawn({topP: 0.81}, 1, probabilities)).toEqual(new Set([0, 1, 2]));
        expect(drawn({topP: 0.5}, 1, probabilities)).toEqual(new Set([0]));
        expect(drawn({topP: 1e-9}, 1, probabilities)).toEqual(new Set([0]));
    });

    it("without filters the draw is what it was (transcription's): the same tokens for the same seed", () => {
        const draws = (sampler: ReturnType<typeof seededSampler>) => Array.from({length: 50}, () => scoresOf(sampler([], logits(probabilities))).indexOf(0));
        expect(draws(seededSampler(1, 4, {topK: 0, topP: 1}))).toEqual(draws(seededSampler(1, 4)));
    });
});

describe("the vision engine's logits processors", () => {
    it("logit_bias adds its value; -100 bans (a large finite penalty, as the llama engine's)", () => {
        expect(scoresOf(logitBiasProcessor([[1, 2.5], [2, -100]])([], logits([0, 1, 2])))).toEqual([0, 3.5, 2 - 1e4]);
    });

    it("penalties count the generated tokens only: count * frequency + presence", () => {
        // A prompt of three tokens (1 among them), then 1, 1, 2 generated.
        const ids = [[1n, 0n, 3n, 1n, 1n, 2n]];
        expect(scoresOf(penaltiesProcessor(3, 0.5, 0.25)(ids, logits([0, 0, 0, 0])))).toEqual([0, -1.25, -0.75, 0]);
    });

    it("RawLogitsTap reads the logits as they come: the top tokens most likely first and the sampled one, with their probabilities", () => {
        const tap = new RawLogitsTap();
        const values = [Math.log(0.1), Math.log(0.6), Math.log(0.05), Math.log(0.25)];
        tap.processor([], logits(values));
        const close = (actual: number[], expected: number[]) => {
            expect(actual).toHaveLength(expected.length);
            actual.forEach((value, index) => expect(value).toBeCloseTo(expected[index], 6));
        };
        close(tap.distribution(1, 2), [1, 0.6, 3, 0.25]);
        close(tap.distribution(2, 2), [1, 0.6, 3, 0.25, 2, 0.05]);
        close(tap.distribution(0, 0), [0, 0.1]);
        close(tap.distribution(2, 4), [1, 0.6, 3, 0.25, 0, 0.1, 2, 0.05]);
    });
});
