import { ddim } from "./ddim.js";
import type { Denoiser } from "./Denoiser.js";
import type { NoiseSource } from "./NoiseSource.js";
import { sampleDpmpp2m } from "./sampleDpmpp2m.js";
import { sampleDpmppSde } from "./sampleDpmppSde.js";
import { sampleEuler } from "./sampleEuler.js";
import { sampleEulerAncestral } from "./sampleEulerAncestral.js";
import { sampleHeun } from "./sampleHeun.js";
import type { SamplingPlan } from "./samplingPlan.js";
import type { StepCallback } from "./StepCallback.js";

/**
 * Runs the plan's sampler from `xT` (see `initialLatent`) and resolves to the latent the VAE decodes: x at σ = 0 for
 * the k-diffusion samplers, the VP latent z for DDIM (unscaled, as A1111 hands it to the VAE). `noise` is only called
 * by the stochastic samplers (Euler a, DPM++ SDE, DDIM with eta > 0), `plan.noiseCalls` times. `onStep` runs after
 * every step, `plan.stepCount` times; if it throws, the run stops there and rejects with that error.
 */
export async function runSampler(plan: SamplingPlan, xT: Float64Array, denoiser: Denoiser, noise: NoiseSource, onStep?: StepCallback): Promise<Float64Array> {
    const options = {eta: plan.eta, sNoise: plan.sNoise};
    switch (plan.sampler) {
        case "Euler":
            return sampleEuler(denoiser, xT, plan.sigmas, onStep);
        case "Euler a":
            return sampleEulerAncestral(denoiser, xT, plan.sigmas, noise, options, onStep);
        case "Heun":
            return sampleHeun(denoiser, xT, plan.sigmas, onStep);
        case "DPM++ 2M Karras":
            return sampleDpmpp2m(denoiser, xT, plan.sigmas, onStep);
        case "DPM++ SDE Karras":
            return sampleDpmppSde(denoiser, xT, plan.sigmas, noise, options, onStep);
        case "DDIM":
            return ddim(denoiser, xT, plan, noise, onStep);
    }
}
