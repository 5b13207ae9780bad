import { describe, expect, it } from "vitest";
import { brownianTreeNoise } from "../../src/capabilities/images/samplers/brownianTreeNoise.js";
import { gaussianNoise } from "../../src/capabilities/images/samplers/gaussianNoise.js";
import { parseSchedulerConfig } from "../../src/capabilities/images/samplers/parseSchedulerConfig.js";
import { samplingPlan } from "../../src/capabilities/images/samplers/samplingPlan.js";
import { seededNoiseSource } from "../../src/capabilities/images/samplers/seededNoiseSource.js";
import { trainingSchedule } from "../../src/capabilities/images/samplers/trainingSchedule.js";
import { normalsFrom } from "../../src/capabilities/images/samplers/normalsFrom.js";
import { Xoshiro128 } from "../../src/capabilities/images/samplers/xoshiro128.js";
import { loadSamplerVectors } from "../support/samplerVectors.js";

// All statistics below use fixed seeds: the tests are deterministic, the bounds are several standard errors wide.
const mean = (values: ArrayLike<number>) => {
    let sum = 0;
    for (let i = 0; i < values.length; i++)
        sum += values[i];
    return sum / values.length;
};
const variance = (values: ArrayLike<number>) => {
    const m = mean(values);
    return mean(Array.from(values, (value) => (value - m) ** 2));
};
const correlation = (a: ArrayLike<number>, b: ArrayLike<number>) => {
    const ma = mean(a);
    const mb = mean(b);
    let ab = 0;
    let aa = 0;
    let bb = 0;
    for (let i = 0; i < a.length; i++) {
        ab += (a[i] - ma) * (b[i] - mb);
        aa += (a[i] - ma) ** 2;
        bb += (b[i] - mb) ** 2;
    }
    return ab / Math.sqrt(aa * bb);
};

describe("gaussianNoise", () => {
    it("xoshiro128** matches the reference implementation's output for state (1, 2, 3, 4)", () => {
        const generator = Xoshiro128.withState([1, 2, 3, 4]);
        expect(Array.from({length: 10}, () => generator.nextUint32())).toEqual(
            [11520, 0, 5927040, 70819200, 2031721883, 1637235492, 1287239034, 3734860849, 3729100597, 4258142804]);
    });

    it("is pinned: the same seed gives these exact numbers in every process", () => {
        expect(Array.from(gaussianNoise(42).take(4))).toEqual([0.63675950711314866, 1.8752996021667732, -0.41084264083843203, -0.29050509410419595]);
        expect(Array.from(gaussianNoise(2 ** 40 + 7, 1).take(2))).toEqual([0.42134421752543794, 0.54290083405130141]);
    });

    it("is deterministic per (seed, stream) and differs across seeds and streams", () => {
        const a = gaussianNoise(123).take(1000);
        expect(Array.from(gaussianNoise(123).take(1000))).toEqual(Array.from(a));
        const streamed = gaussianNoise(123);
        expect(Array.from({length: 1000}, () => streamed.next())).toEqual(Array.from(a));
        expect(correlation(gaussianNoise(124).take(1000), a)).toBeLessThan(0.15);
        expect(correlation(gaussianNoise(123, 1).take(1000), a)).toBeLessThan(0.15);
        expect(Array.from(gaussianNoise(2 ** 32 + 123).take(4))).not.toEqual(Array.from(a.subarray(0, 4)));
    });

    it("is standard normal: mean, variance, tails and independence of neighbours on 400000 samples", () => {
        const n = 400_000;
        const values = gaussianNoise(2024).take(n);
        expect(Math.abs(mean(values))).toBeLessThan(5 / Math.sqrt(n));
        expect(Math.abs(variance(values) - 1)).toBeLessThan(5 * Math.sqrt(2 / n));
        const within1 = values.filter((value) => Math.abs(value) < 1).length / n;
        expect(Math.abs(within1 - 0.682689)).toBeLessThan(0.004);
        const beyond3 = values.filter((value) => Math.abs(value) > 3).length / n;
        expect(Math.abs(beyond3 - 0.0026998)).toBeLessThan(0.0005);
        // Pairs (cos, sin halves of Box-Muller) and neighbours across pairs are uncorrelated.
        expect(Math.abs(correlation(values.subarray(0, n - 1), values.subarray(1)))).toBeLessThan(5 / Math.sqrt(n));
        expect(Math.abs(correlation(values.subarray(0, n - 2), values.subarray(2)))).toBeLessThan(5 / Math.sqrt(n));
    });

    it("normalsFrom (the Brownian tree's fast path) gives gaussianNoise's numbers for the same key", () => {
        expect(Array.from(normalsFrom(new Xoshiro128([42, 0, 0]), 6))).toEqual(Array.from(gaussianNoise(42).take(6)));
        expect(Array.from(normalsFrom(new Xoshiro128([7, 256, 1]), 5))).toEqual(Array.from(gaussianNoise(256 * 2 ** 32 + 7, 1).take(5)));
    });

    it("rejects seeds that are not non-negative safe integers", () => {
        expect(() => gaussianNoise(-1)).toThrow(/seed/);
        expect(() => gaussianNoise(1.5)).toThrow(/seed/);
        expect(() => gaussianNoise(2 ** 53)).toThrow(/seed/);
    });
});

describe("seededNoiseSource", () => {
    it("serves fresh tensors in order, reproducibly, apart from the initial latent's stream", () => {
        const source = seededNoiseSource(5, 100);
        const first = source(10, 5);
        const second = source(5, 1);
        expect(Array.from(second)).not.toEqual(Array.from(first));
        const again = seededNoiseSource(5, 100);
        expect(Array.from(again(1, 0.5))).toEqual(Array.from(first));
        expect(Array.from(again(1, 0.5))).toEqual(Array.from(second));
        expect(Array.from(first)).not.toEqual(Array.from(gaussianNoise(5).take(100)));
    });
});

describe("brownianTreeNoise", () => {
    const schedule = trainingSchedule(parseSchedulerConfig({beta_start: 0.00085, beta_end: 0.012, beta_schedule: "scaled_linear"}));

    it("is pinned for a seed", () => {
        expect(Array.from(brownianTreeNoise(42, 0.03, 14.6, 3)(10, 5))).toEqual([-0.60828716245471626, -0.039998883354450634, -1.1623712030795021]);
    });

    it("gives the same numbers whatever the order and number of queries", () => {
        const queries: [number, number][] = [[14.6, 9], [14.6, Math.sqrt(14.6 * 9)], [9, 2], [2, 0.5], [0.5, 0.03], [3.3, 3.2999]];
        const forward = brownianTreeNoise(9, 0.03, 14.6, 32);
        const results = queries.map(([a, b]) => Array.from(forward(a, b)));
        const backward = brownianTreeNoise(9, 0.03, 14.6, 32);
        const reversed = queries.slice().reverse().map(([a, b]) => Array.from(backward(a, b))).reverse();
        expect(reversed).toEqual(results);
        // Extra unrelated queries in between change nothing.
        const busy = brownianTreeNoise(9, 0.03, 14.6, 32);
        const interleaved = queries.map(([a, b]) => {
            busy(7.77, 1.11);
            busy(0.04, 14.5);
            return Array.from(busy(a, b));
        });
        expect(interleaved).toEqual(results);
        // Swapping the ends flips the sign (k-diffusion's sort and sign).
        expect(Array.from(brownianTreeNoise(9, 0.03, 14.6, 32)(9, 14.6))).toEqual(results[0].map((value) => -value));
    });

    it("increments are standard normal and those over disjoint intervals are independent", () => {
        const n = 20_000;
        const source = brownianTreeNoise(77, schedule.sigmaMin, schedule.sigmaMax, n);
        const a = source(14, 6);
        const b = source(6, 1.3);
        const c = source(1.3, 0.05);
        for (const increment of [a, b, c]) {
            expect(Math.abs(mean(increment))).toBeLessThan(5 / Math.sqrt(n));
            expect(Math.abs(variance(increment) - 1)).toBeLessThan(5 * Math.sqrt(2 / n));
        }
        expect(Math.abs(correlation(a, b))).toBeLessThan(5 / Math.sqrt(n));
        expect(Math.abs(correlation(b, c))).toBeLessThan(5 / Math.sqrt(n));
        // Additivity: W(14)->W(0.05) is the sum of the three pieces.
        const whole = source(14, 0.05);
        const sum = a.map((value, i) => (value * Math.sqrt(8) + b[i] * Math.sqrt(4.7) + c[i] * Math.sqrt(1.25)) / Math.sqrt(13.95));
        expect(Math.max(...whole.map((value, i) => Math.abs(value - sum[i])))).toBeLessThan(1e-9);
    });

    it("the two draws of a DPM++ SDE step are correlated as Brownian increments (README: 0.73 on average)", () => {
        const n = 10_000;
        const plan = samplingPlan("DPM++ SDE Karras", 25, schedule);
        const source = brownianTreeNoise(3, plan.noiseInterval.sigmaMin, plan.noiseInterval.sigmaMax, n);
        const theory: number[] = [];
        const measured: number[] = [];
        for (let i = 0; i < plan.steps - 1; i++) {
            const sigma = plan.sigmas[i];
            const sigmaNext = plan.sigmas[i + 1];
            const sigmaHalf = Math.exp(-(-Math.log(sigma) + (-Math.log(sigmaNext) + Math.log(sigma)) / 2));
            const first = source(sigma, sigmaHalf);
            const second = source(sigma, sigmaNext);
            // Cov(W(s) − W(σ), W(σn) − W(σ)) / √(|s − σ|·|σn − σ|) = √(|s − σ| / |σn − σ|).
            theory.push(Math.sqrt((sigma - sigmaHalf) / (sigma - sigmaNext)));
            measured.push(correlation(first, second));
            expect(Math.abs(measured[i] - theory[i])).toBeLessThan(0.035);
        }
        expect(mean(theory)).toBeCloseTo(0.73, 2);
        expect(Math.abs(mean(measured) - mean(theory))).toBeLessThan(0.01);
        // The shared vectors' draws (numpy's Brownian bridge) show the same structure.
        const vector = loadSamplerVectors().cases.find((item) => item.sampler === "DPM++ SDE Karras" && item.steps === 25)!;
        const pairs: number[] = [];
        for (let k = 0; k < vector.noises.length; k += 2)
            pairs.push(correlation(vector.noises[k].noise, vector.noises[k + 1].noise));
        expect(Math.abs(mean(pairs) - mean(theory))).toBeLessThan(0.05);
    });

    it("accepts the single-point interval of a one-step DPM++ SDE plan (which draws nothing) and rejects bad ones", () => {
        const plan = samplingPlan("DPM++ SDE Karras", 1, schedule);
        expect(plan.noiseCalls).toBe(0);
        const source = brownianTreeNoise(1, plan.noiseInterval.sigmaMin, plan.noiseInterval.sigmaMax, 4);
        expect(() => source(1, 2)).toThrow(/single point/);
        expect(() => brownianTreeNoise(1, 3, 2, 4)).toThrow(/sigmaMin <= sigmaMax/);
        expect(() => brownianTreeNoise(1, 0, 2, 4)).toThrow(/0 < sigmaMin/);
    });
});
