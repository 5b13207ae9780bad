import { afterAll, describe, expect, it } from "vitest";
import { parseSchedulerConfig } from "../../src/capabilities/images/samplers/parseSchedulerConfig.js";
import { runSampler } from "../../src/capabilities/images/samplers/runSampler.js";
import type { SamplerName } from "../../src/capabilities/images/samplers/samplerNames.js";
import { samplingPlan } from "../../src/capabilities/images/samplers/samplingPlan.js";
import { sigmaToTimestep } from "../../src/capabilities/images/samplers/sigmaToTimestep.js";
import { trainingSchedule } from "../../src/capabilities/images/samplers/trainingSchedule.js";
import { loadSamplerVectors, maxRelativeError, maxStrictRelativeError, toyDenoiser, type SamplerVectorCase } from "../support/samplerVectors.js";

const vectors = loadSamplerVectors();
const train = vectors.schedules.train;
const schedule = trainingSchedule(parseSchedulerConfig({
    num_train_timesteps: train.num_train_timesteps, beta_start: train.beta_start, beta_end: train.beta_end,
    beta_schedule: "scaled_linear"
}));
const worst = {schedule: 0, steps: 0, x0: 0, noiseSigma: 0};

function caseName(vector: SamplerVectorCase) {
    return `${vector.sampler}${vector.ddim_variant ? ` (${vector.ddim_variant})` : ""}, ${vector.steps} steps, ${vector.denoiser}`;
}

describe("samplers reproduce the shared k-diffusion / A1111 reference runs", () => {
    it("has all 56 cases", () => {
        expect(vectors.cases).toHaveLength(56);
    });

    for (const vector of vectors.cases) {
        it(caseName(vector), async () => {
            const plan = samplingPlan(vector.sampler as SamplerName, vector.steps, schedule, {ddimVariant: vector.ddim_variant});
            const expectedSigmas = vector.sigmas ?? vector.equivalent_kdiff_sigmas!;
            expect(plan.sigmas.length).toBe(expectedSigmas.length);
            const sigmaError = maxStrictRelativeError(plan.sigmas, expectedSigmas);
            worst.schedule = Math.max(worst.schedule, sigmaError);
            expect(sigmaError).toBeLessThanOrEqual(1e-13);
            if (vector.timesteps) {
                expect(Array.from(plan.ddim!.timesteps)).toEqual(vector.timesteps);
                expect(maxStrictRelativeError(plan.ddim!.alphas, vector.alphas!)).toBeLessThanOrEqual(1e-13);
                expect(maxStrictRelativeError(plan.ddim!.alphasPrev, vector.alphas_prev!)).toBeLessThanOrEqual(1e-13);
            }

            const toy = toyDenoiser(vector.denoiser);
            const calls: number[] = [];
            const denoiser = async (x: Float64Array, sigma: number) => {
                calls.push(sigma);
                return toy(x, sigma);
            };
            let served = 0;
            const noise = (sigma: number, sigmaNext: number) => {
                const stored = vector.noises[served];
                if (stored == null)
                    throw new Error(`noise request ${served} (${sigma} -> ${sigmaNext}) beyond the ${vector.noises.length} stored`);
                const sigmaError = Math.max(Math.abs(sigma - stored.sigma) / stored.sigma, Math.abs(sigmaNext - stored.sigma_next) / stored.sigma_next);
                worst.noiseSigma = Math.max(worst.noiseSigma, sigmaError);
                if (!(sigmaError <= 1e-12))
                    throw new Error(`noise request ${served}: (${sigma}, ${sigmaNext}) != stored (${stored.sigma}, ${stored.sigma_next})`);
                served++;
                return Float64Array.from(stored.noise);
            };
            const steps: Float64Array[] = [];
            const xT = Float64Array.from(vector.x_T);
            const x0 = await runSampler(plan, xT, denoiser, noise, (i, x) => {
                expect(i).toBe(steps.length);
                steps.push(x);
            });

            expect(served).toBe(vector.noises.length);
            expect(served).toBe(plan.noiseCalls);
            expect(steps).toHaveLength(plan.stepCount);
            expect(calls).toHaveLength(plan.modelCalls);
            if (vector.model_call_sigmas) {
                expect(calls).toHaveLength(vector.model_call_sigmas.length);
                expect(maxStrictRelativeError(calls, vector.model_call_sigmas)).toBeLessThanOrEqual(1e-12);
            } else {
                expect(calls.map((sigma) => sigmaToTimestep(schedule, sigma))).toEqual(vector.model_call_timesteps);
            }
            if (vector.x_per_step) {
                // x_per_step[i] is x entering step i; onStep(i) reports x leaving it.
                expect(steps).toHaveLength(vector.x_per_step.length);
                for (let i = 1; i < vector.x_per_step.length; i++) {
                    const error = maxRelativeError(steps[i - 1], vector.x_per_step[i]);
                    worst.steps = Math.max(worst.steps, error);
                    expect(error, `x entering step ${i}`).toBeLessThanOrEqual(1e-12);
                }
            }
            const error = maxRelativeError(x0, vector.x_0);
            worst.x0 = Math.max(worst.x0, error);
            expect(error).toBeLessThanOrEqual(1e-12);
            expect(Array.from(xT)).toEqual(vector.x_T);
        });
    }

    afterAll(() => {
        console.log(`samplers vs vectors: max error x_0 ${worst.x0.toExponential(2)}, per step ${worst.steps.toExponential(2)} (|a-b|/max(1,|b|)); sigmas ${worst.schedule.toExponential(2)} rel; noise sigma requests ${worst.noiseSigma.toExponential(2)} rel`);
    });
});
