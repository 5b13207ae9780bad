import type { SamplingPlan } from "./samplingPlan.js";

/**
 * The x_T a sampler starts from, given unit Gaussian noise: k-diffusion samplers take `unit · sigmas[0]` (A1111
 * `sample()`: `x = x * sigmas[0]`), DDIM takes the unit noise itself (the VP latent is not scaled).
 */
export function initialLatent(plan: SamplingPlan, unitNoise: Float64Array): Float64Array {
    if (plan.ddim != null)
        return Float64Array.from(unitNoise);
    const scale = plan.sigmas[0];
    return unitNoise.map((value) => value * scale);
}
