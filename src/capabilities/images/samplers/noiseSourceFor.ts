import { brownianTreeNoise } from "./brownianTreeNoise.js";
import type { NoiseSource } from "./NoiseSource.js";
import type { SamplingPlan } from "./samplingPlan.js";
import { seededNoiseSource } from "./seededNoiseSource.js";

/**
 * The noise source A1111 gives each sampler, for one image's seed and latent length: a Brownian tree over the plan's
 * sigma interval for DPM++ SDE (A1111's `BrownianTreeNoiseSampler(x, σmin⁺, σmax, seed)`), independent draws
 * (`seededNoiseSource`) for the others (only Euler a and DDIM with eta > 0 use them).
 */
export function noiseSourceFor(plan: SamplingPlan, seed: number, length: number): NoiseSource {
    if (plan.sampler === "DPM++ SDE Karras")
        return brownianTreeNoise(seed, plan.noiseInterval.sigmaMin, plan.noiseInterval.sigmaMax, length);
    return seededNoiseSource(seed, length);
}
