import { describe, expect, it } from "vitest";
import { compVisDenoiser } from "../../src/capabilities/images/samplers/compVisDenoiser.js";
import { parseSchedulerConfig } from "../../src/capabilities/images/samplers/parseSchedulerConfig.js";
import { runSampler } from "../../src/capabilities/images/samplers/runSampler.js";
import { samplerNames } from "../../src/capabilities/images/samplers/samplerNames.js";
import { samplingPlan } from "../../src/capabilities/images/samplers/samplingPlan.js";
import { trainingSchedule } from "../../src/capabilities/images/samplers/trainingSchedule.js";
import { noiseSourceFor } from "../../src/capabilities/images/samplers/noiseSourceFor.js";
import { initialLatent } from "../../src/capabilities/images/samplers/initialLatent.js";
import { gaussianNoise } from "../../src/capabilities/images/samplers/gaussianNoise.js";
import { loadSamplerVectors, maxRelativeError, toyDenoiser } from "../support/samplerVectors.js";

const schedule = trainingSchedule(parseSchedulerConfig({beta_start: 0.00085, beta_end: 0.012, beta_schedule: "scaled_linear"}));
const toy = toyDenoiser("tanh");
const x = Float64Array.from({length: 64}, (_, i) => Math.sin(i * 1.7) * 3);

/** The network's own fractional t -> sigma, in float64 (log-linear in the table, no float32 cast). */
function networkSigma(t: number) {
    const low = Math.floor(t);
    const high = Math.min(low + 1, 999);
    const w = t - low;
    return Math.exp((1 - w) * schedule.logSigmas[low] + w * schedule.logSigmas[high]);
}

describe("compVisDenoiser", () => {
    it("eps: D is recovered from an eps network derived from D (the README's DDIM relation)", async () => {
        const seen: number[] = [];
        const epsNetwork = async (scaled: Float64Array, t: number) => {
            seen.push(t);
            const sigma = networkSigma(t);
            const unscaled = scaled.map((value) => value * Math.sqrt(1 + sigma * sigma));
            const denoised = toy(unscaled, sigma);
            return unscaled.map((value, j) => (value - denoised[j]) / sigma);
        };
        const denoiser = compVisDenoiser(epsNetwork, schedule);
        for (const sigma of [schedule.sigmaMax, 7.3, 1, 0.25, schedule.sigmaMin]) {
            expect(maxRelativeError(await denoiser(x, sigma), toy(x, sigma))).toBeLessThanOrEqual(1e-12);
        }
        expect(seen[0]).toBe(999);
        expect(seen[4]).toBe(0);
        expect(seen[1] % 1).not.toBe(0);
    });

    it("v_prediction (CompVisVDenoiser): D is recovered from a v network derived from D", async () => {
        const vNetwork = async (scaled: Float64Array, t: number) => {
            const sigma = networkSigma(t);
            const unscaled = scaled.map((value) => value * Math.sqrt(1 + sigma * sigma));
            const denoised = toy(unscaled, sigma);
            const cSkip = 1 / (sigma ** 2 + 1);
            const cOut = -sigma / Math.sqrt(sigma ** 2 + 1);
            return unscaled.map((value, j) => (denoised[j] - cSkip * value) / cOut);
        };
        const denoiser = compVisDenoiser(vNetwork, schedule, {predictionType: "v_prediction"});
        for (const sigma of [schedule.sigmaMax, 3.1, 0.5, schedule.sigmaMin])
            expect(maxRelativeError(await denoiser(x, sigma), toy(x, sigma))).toBeLessThanOrEqual(1e-12);
        // The eps reading of the same network gives something else.
        const wrong = compVisDenoiser(vNetwork, schedule, {predictionType: "epsilon"});
        expect(maxRelativeError(await wrong(x, 3.1), toy(x, 3.1))).toBeGreaterThan(1e-3);
    });

    it("quantize feeds the nearest integer timestep", async () => {
        const seen: number[] = [];
        const denoiser = compVisDenoiser(async (scaled, t) => {
            seen.push(t);
            return scaled;
        }, schedule, {quantize: true});
        await denoiser(x, Math.exp(0.4 * schedule.logSigmas[300] + 0.6 * schedule.logSigmas[301]));
        expect(seen).toEqual([301]);
    });

    it("DDIM driven through an eps network reproduces the shared DDIM vectors, calling it at the integer timesteps", async () => {
        const vectors = loadSamplerVectors();
        for (const vector of vectors.cases.filter((item) => item.sampler === "DDIM")) {
            const d = toyDenoiser(vector.denoiser);
            const timesteps: number[] = [];
            const epsNetwork = async (z: Float64Array, t: number) => {
                timesteps.push(t);
                const sigma = schedule.sigmas[t];
                const scaled = z.map((value) => value * Math.sqrt(1 + sigma * sigma));
                const denoised = d(scaled, sigma);
                return scaled.map((value, j) => (value - denoised[j]) / sigma);
            };
            const plan = samplingPlan("DDIM", vector.steps, schedule, {ddimVariant: vector.ddim_variant});
            const x0 = await runSampler(plan, Float64Array.from(vector.x_T), compVisDenoiser(epsNetwork, schedule), () => {
                throw new Error("DDIM with eta 0 draws no noise");
            });
            expect(timesteps).toEqual(vector.model_call_timesteps);
            expect(maxRelativeError(x0, vector.x_0)).toBeLessThanOrEqual(1e-12);
        }
    });
});

describe("runSampler", () => {
    it("stops at the step whose callback throws and makes no further model calls", async () => {
        for (const name of samplerNames) {
            const plan = samplingPlan(name, 10, schedule);
            let calls = 0;
            const denoiser = async (input: Float64Array, sigma: number) => {
                calls++;
                return toy(input, sigma);
            };
            const cancelled = new Error("client went away");
            let steps = 0;
            const run = runSampler(plan, initialLatent(plan, gaussianNoise(1).take(64)), denoiser, noiseSourceFor(plan, 1, 64), () => {
                if (++steps === 3)
                    throw cancelled;
            });
            await expect(run).rejects.toBe(cancelled);
            expect(steps).toBe(3);
            const perStep = name === "Heun" || name === "DPM++ SDE Karras" ? 2 : 1;
            expect(calls).toBe(3 * perStep);
        }
    });

    it("awaits an async callback before the next model call", async () => {
        const plan = samplingPlan("Euler", 4, schedule);
        const events: string[] = [];
        await runSampler(plan, initialLatent(plan, x), async (input, sigma) => {
            events.push("model");
            return toy(input, sigma);
        }, () => new Float64Array(64), async (i) => {
            await Promise.resolve();
            await Promise.resolve();
            events.push(`step ${i}`);
        });
        expect(events).toEqual(["model", "step 0", "model", "step 1", "model", "step 2", "model", "step 3"]);
    });

    it("every sampler turns pure noise into the toy posterior's range, and the same seed gives the same latent", async () => {
        for (const name of samplerNames) {
            const plan = samplingPlan(name, 20, schedule);
            const run = () => runSampler(plan, initialLatent(plan, gaussianNoise(7).take(1024)), async (input, sigma) => toy(input, sigma), noiseSourceFor(plan, 7, 1024));
            const first = await run();
            expect(Array.from(await run())).toEqual(Array.from(first));
            // tanh(x)/(1 + σ²) at σ → 0 lies in (-1, 1).
            expect(Math.max(...first.map(Math.abs))).toBeLessThan(1.05);
        }
    });
});

describe("one-step runs", () => {
    it("every sampler runs 1 step with the pipeline's noise sources", async () => {
        for (const name of samplerNames) {
            const plan = samplingPlan(name, 1, schedule);
            const x0 = await runSampler(plan, initialLatent(plan, gaussianNoise(3).take(64)), async (input, sigma) => toy(input, sigma), noiseSourceFor(plan, 3, 64));
            expect(x0.every(Number.isFinite)).toBe(true);
        }
    });
});

describe("DDIM with eta > 0", () => {
    it("draws one noise per update at (σ_t, σ_prev) and adds it with A1111's sigma_t", async () => {
        const plan = samplingPlan("DDIM", 5, schedule, {eta: 1});
        const requests: [number, number][] = [];
        const zeros = await runSampler(plan, Float64Array.from(x), async (input, sigma) => toy(input, sigma), (sigma, sigmaNext) => {
            requests.push([sigma, sigmaNext]);
            return new Float64Array(64);
        });
        expect(requests).toHaveLength(plan.noiseCalls);
        expect(requests.map(([sigma]) => sigma)).toEqual(Array.from(plan.sigmas.subarray(0, 5)));
        requests.forEach(([, sigmaNext], i) => expect(sigmaNext).toBeCloseTo(plan.sigmas[i + 1], 12));
        // With zero noise, eta = 1 still differs from eta = 0 (less of eps is kept: √(1 − ᾱ_prev − σ_t²)).
        const deterministic = await runSampler(samplingPlan("DDIM", 5, schedule), Float64Array.from(x), async (input, sigma) => toy(input, sigma), () => {
            throw new Error("eta 0 draws nothing");
        });
        expect(maxRelativeError(zeros, deterministic)).toBeGreaterThan(1e-3);
        const noisy = await runSampler(plan, Float64Array.from(x), async (input, sigma) => toy(input, sigma), () => new Float64Array(64).fill(1));
        expect(maxRelativeError(noisy, zeros)).toBeGreaterThan(1e-3);
    });
});
