import { describe, expect, it } from "vitest";
import { initialLatent } from "../../src/capabilities/images/samplers/initialLatent.js";
import { parseSchedulerConfig } from "../../src/capabilities/images/samplers/parseSchedulerConfig.js";
import { samplingPlan } from "../../src/capabilities/images/samplers/samplingPlan.js";
import { sigmaToTimestep } from "../../src/capabilities/images/samplers/sigmaToTimestep.js";
import { timestepToSigma } from "../../src/capabilities/images/samplers/timestepToSigma.js";
import { trainingSchedule } from "../../src/capabilities/images/samplers/trainingSchedule.js";
import { loadSamplerVectors, maxStrictRelativeError } from "../support/samplerVectors.js";

const vectors = loadSamplerVectors();
/** Stable Diffusion 1.x's scheduler/scheduler_config.json (PNDMScheduler), as the hub ships it. */
const sd15Config = {
    _class_name: "PNDMScheduler", _diffusers_version: "0.6.0", beta_end: 0.012, beta_schedule: "scaled_linear",
    beta_start: 0.00085, num_train_timesteps: 1000, set_alpha_to_one: false, skip_prk_steps: true, steps_offset: 1,
    trained_betas: null, clip_sample: false
};
const schedule = trainingSchedule(parseSchedulerConfig(sd15Config));

describe("parseSchedulerConfig", () => {
    it("reads SD 1.5's config and applies diffusers' defaults", () => {
        expect(parseSchedulerConfig(sd15Config)).toEqual({
            numTrainTimesteps: 1000, betaStart: 0.00085, betaEnd: 0.012, betaSchedule: "scaled_linear", trainedBetas: null,
            predictionType: "epsilon", timestepSpacing: "leading", stepsOffset: 1
        });
        expect(parseSchedulerConfig("{}")).toEqual({
            numTrainTimesteps: 1000, betaStart: 0.0001, betaEnd: 0.02, betaSchedule: "linear", trainedBetas: null,
            predictionType: "epsilon", timestepSpacing: "leading", stepsOffset: 0
        });
        expect(parseSchedulerConfig({_class_name: "EulerDiscreteScheduler"}).timestepSpacing).toBe("linspace");
        expect(parseSchedulerConfig({prediction_type: "v_prediction", timestep_spacing: "trailing"})).toMatchObject({predictionType: "v_prediction", timestepSpacing: "trailing"});
    });

    it("names the bad field", () => {
        expect(() => parseSchedulerConfig({beta_schedule: "cosine"})).toThrow(/beta_schedule must be one of linear, scaled_linear, squaredcos_cap_v2/);
        expect(() => parseSchedulerConfig({prediction_type: "sample"})).toThrow(/prediction_type/);
        expect(() => parseSchedulerConfig({beta_end: 2})).toThrow(/beta_end/);
        expect(() => parseSchedulerConfig({num_train_timesteps: 10.5})).toThrow(/num_train_timesteps/);
        expect(() => parseSchedulerConfig({timestep_spacing: "uniform"})).toThrow(/timestep_spacing/);
        expect(() => parseSchedulerConfig({steps_offset: -1})).toThrow(/steps_offset/);
        expect(() => parseSchedulerConfig({trained_betas: [0.1]})).toThrow(/trained_betas/);
        expect(() => parseSchedulerConfig("{")).toThrow(/not valid JSON/);
        expect(() => parseSchedulerConfig([])).toThrow(/JSON object/);
    });
});

describe("trainingSchedule", () => {
    it("matches the reference betas, alphas_cumprod, sigma table and its ends", () => {
        const reference = vectors.schedules;
        expect(maxStrictRelativeError(schedule.betas, reference.betas)).toBeLessThanOrEqual(1e-15);
        expect(maxStrictRelativeError(schedule.alphasCumprod, reference.alphas_cumprod)).toBeLessThanOrEqual(1e-14);
        expect(maxStrictRelativeError(schedule.sigmas, reference.model_sigmas)).toBeLessThanOrEqual(1e-13);
        // Absolute: log sigma crosses 0 near t = 460.
        expect(Math.max(...schedule.logSigmas.map((value, t) => Math.abs(value - reference.model_log_sigmas[t])))).toBeLessThanOrEqual(1e-14);
        expect(schedule.sigmaMin).toBeCloseTo(reference.sigma_min, 15);
        expect(Math.abs(schedule.sigmaMax - reference.sigma_max) / reference.sigma_max).toBeLessThanOrEqual(1e-14);
    });

    it("builds linear, cosine and trained betas", () => {
        const linear = trainingSchedule(parseSchedulerConfig({beta_start: 0.0001, beta_end: 0.02}));
        expect(linear.betas[0]).toBe(0.0001);
        expect(linear.betas[999]).toBe(0.02);
        const cosine = trainingSchedule(parseSchedulerConfig({beta_schedule: "squaredcos_cap_v2"}));
        expect(cosine.betas[999]).toBe(0.999);
        expect(cosine.alphasCumprod[0]).toBeCloseTo(Math.cos(1 / 1000 / 1.008 * Math.PI / 2 + 0.008 / 1.008 * Math.PI / 2) ** 2 / Math.cos(0.008 / 1.008 * Math.PI / 2) ** 2, 12);
        const trained = trainingSchedule(parseSchedulerConfig({num_train_timesteps: 3, trained_betas: [0.1, 0.2, 0.3]}));
        expect(Array.from(trained.alphasCumprod)).toEqual([0.9, 0.9 * 0.8, 0.9 * 0.8 * 0.7]);
    });
});

describe("sigma <-> timestep (k-diffusion DiscreteSchedule)", () => {
    it("sigma_to_t matches the stored values for the default and Karras schedules", () => {
        for (const [steps, stored] of Object.entries(vectors.schedules.default)) {
            const t = stored.sigmas.slice(0, Number(steps)).map((sigma) => sigmaToTimestep(schedule, sigma));
            expect(t.map((value, i) => Math.abs(value - stored.sigma_to_t[i]))).toSatisfy((errors: number[]) => errors.every((error) => error <= 1e-10));
        }
        for (const [steps, stored] of Object.entries(vectors.schedules.karras)) {
            const t = stored.sigmas.slice(0, Number(steps)).map((sigma) => sigmaToTimestep(schedule, sigma));
            expect(t.map((value, i) => Math.abs(value - stored.sigma_to_t[i]))).toSatisfy((errors: number[]) => errors.every((error) => error <= 1e-10));
        }
    });

    it("table sigmas map to their exact integer timestep; quantize rounds to the nearest in log sigma", () => {
        for (const t of [0, 1, 41, 500, 998, 999])
            expect(sigmaToTimestep(schedule, schedule.sigmas[t])).toBe(t);
        expect(sigmaToTimestep(schedule, schedule.sigmaMax * 2)).toBe(999);
        expect(sigmaToTimestep(schedule, schedule.sigmaMin / 2)).toBe(0);
        const between = Math.exp(0.3 * schedule.logSigmas[500] + 0.7 * schedule.logSigmas[501]);
        expect(sigmaToTimestep(schedule, between)).toBeCloseTo(500.7, 10);
        expect(sigmaToTimestep(schedule, between, {quantize: true})).toBe(501);
    });

    it("t_to_sigma interpolates log sigma and casts t to float32 first", () => {
        expect(timestepToSigma(schedule, 999)).toBeCloseTo(vectors.schedules.default["2"].sigmas[0], 14);
        expect(Math.abs(timestepToSigma(schedule, 957.375) / vectors.schedules.default["25"].sigmas[1] - 1)).toBeLessThanOrEqual(1e-15);
        // 500.1 is not a float32: t_to_sigma sees Math.fround(500.1) = 500.1000061035156.
        const w = Math.fround(Math.fround(500.1) - 500);
        expect(timestepToSigma(schedule, 500.1)).toBe(Math.exp(Math.fround(1 - w) * schedule.logSigmas[500] + w * schedule.logSigmas[501]));
        expect(timestepToSigma(schedule, 500.1)).not.toBe(Math.exp(0.9 * schedule.logSigmas[500] + 0.1 * schedule.logSigmas[501]));
    });
});

describe("samplingPlan", () => {
    it("default, Karras and DDIM schedules equal the stored ones for 1, 2, 10 and 25 steps", () => {
        for (const steps of [1, 2, 10, 25]) {
            expect(maxStrictRelativeError(samplingPlan("Euler", steps, schedule).sigmas, vectors.schedules.default[steps].sigmas)).toBeLessThanOrEqual(1e-13);
            expect(maxStrictRelativeError(samplingPlan("DPM++ 2M Karras", steps, schedule).sigmas, vectors.schedules.karras[steps].sigmas)).toBeLessThanOrEqual(1e-13);
            const ddim = samplingPlan("DDIM", steps, schedule).ddim!;
            expect(Array.from(ddim.timesteps)).toEqual(vectors.schedules.ddim[steps].timesteps);
            expect(Array.from(samplingPlan("DDIM", steps, schedule, {ddimVariant: "a1111"}).ddim!.timesteps)).toEqual(vectors.schedules.ddim[steps].timesteps);
        }
    });

    it("counts model calls, steps and noise draws per sampler", () => {
        const counts = (name: Parameters<typeof samplingPlan>[0], options = {}) => {
            const plan = samplingPlan(name, 10, schedule, options);
            return [plan.modelCalls, plan.stepCount, plan.noiseCalls];
        };
        expect(counts("Euler")).toEqual([10, 10, 0]);
        expect(counts("Euler a")).toEqual([10, 10, 9]);
        expect(counts("Heun")).toEqual([19, 10, 0]);
        expect(counts("DPM++ 2M Karras")).toEqual([10, 10, 0]);
        expect(counts("DPM++ SDE Karras")).toEqual([19, 10, 18]);
        expect(counts("DDIM")).toEqual([10, 10, 0]);
        expect(counts("DDIM", {ddimVariant: "a1111"})).toEqual([9, 9, 0]);
        expect(counts("DDIM", {eta: 1})).toEqual([10, 10, 10]);
    });

    it("DDIM timesteps when N does not divide 1000: A1111's clipped range vs exactly N for compvis", () => {
        expect(Array.from(samplingPlan("DDIM", 3, schedule, {ddimVariant: "a1111"}).ddim!.timesteps)).toEqual([1, 334, 667, 999]);
        expect(samplingPlan("DDIM", 3, schedule, {ddimVariant: "a1111"}).stepCount).toBe(3);
        expect(Array.from(samplingPlan("DDIM", 3, schedule).ddim!.timesteps)).toEqual([1, 334, 667]);
        expect(samplingPlan("DDIM", 1, schedule).stepCount).toBe(1);
        expect(samplingPlan("DDIM", 1, schedule, {ddimVariant: "a1111"}).stepCount).toBe(0);
    });

    it("diffusers spacings for distilled models (trailing, leading, linspace)", () => {
        const at = (...t: number[]) => [...t.map((value) => schedule.sigmas[value]), 0];
        expect(Array.from(samplingPlan("Euler", 4, schedule, {spacing: "trailing"}).sigmas)).toEqual(at(999, 749, 499, 249));
        expect(Array.from(samplingPlan("Euler", 4, schedule, {spacing: "leading"}).sigmas)).toEqual(at(751, 501, 251, 1));
        expect(Array.from(samplingPlan("Euler", 4, schedule, {spacing: "config"}).sigmas)).toEqual(at(751, 501, 251, 1));
        expect(Array.from(samplingPlan("Euler", 4, schedule, {spacing: "linspace"}).sigmas)).toEqual(at(999, 666, 333, 0));
        expect(samplingPlan("Euler", 3, schedule, {spacing: "linspace"}).sigmas[1]).toBeCloseTo((schedule.sigmas[499] + schedule.sigmas[500]) / 2, 14);
        expect(Array.from(samplingPlan("Euler", 1, schedule, {spacing: "trailing"}).sigmas)).toEqual(at(999));
        expect(Array.from(samplingPlan("Euler", 1, schedule, {spacing: "linspace"}).sigmas)).toEqual(at(0));
    });

    it("rejects bad steps and unknown samplers", () => {
        expect(() => samplingPlan("Euler", 0, schedule)).toThrow(/steps/);
        expect(() => samplingPlan("Euler", 2.5, schedule)).toThrow(/steps/);
        expect(() => samplingPlan("LMS" as never, 10, schedule)).toThrow(/Unknown sampler 'LMS'.*DPM\+\+ 2M Karras/);
    });

    it("initialLatent scales unit noise by sigmas[0] except for DDIM", () => {
        const unit = Float64Array.from([1, -2]);
        const euler = samplingPlan("Euler", 10, schedule);
        expect(Array.from(initialLatent(euler, unit))).toEqual([euler.sigmas[0], -2 * euler.sigmas[0]]);
        expect(Array.from(initialLatent(samplingPlan("DDIM", 10, schedule), unit))).toEqual([1, -2]);
    });
});
