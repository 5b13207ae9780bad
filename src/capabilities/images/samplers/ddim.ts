import type { Denoiser } from "./Denoiser.js";
import type { NoiseSource } from "./NoiseSource.js";
import type { SamplingPlan } from "./samplingPlan.js";
import type { StepCallback } from "./StepCallback.js";

/**
 * A1111's `sd_samplers_timesteps_impl.ddim` (variant "a1111": timesteps N−1 … 1, so len − 1 updates) or CompVis
 * `DDIMSampler` (variant "compvis": every timestep, the last update going to ᾱ₀), on the VP latent z. The network is
 * reached through the k-diffusion denoiser: eps(z, t) = (x − D(x, σₜ))/σₜ with x = z·√(1 + σₜ²) and σₜ the table
 * sigma of t, which for `compVisDenoiser(epsModel)` is the network's eps at exactly t. With eta > 0, noise(σₜ, σ_prev)
 * supplies the fresh noise.
 */
export async function ddim(denoiser: Denoiser, x: Float64Array, plan: SamplingPlan, noise: NoiseSource, onStep?: StepCallback): Promise<Float64Array> {
    if (plan.ddim == null)
        throw new Error("ddim needs a DDIM plan.");
    const {timesteps, alphas, alphasPrev, variant} = plan.ddim;
    const eta = plan.eta;
    const tableSigmas = plan.schedule.sigmas;
    const updates = variant === "a1111" ? timesteps.length - 1 : timesteps.length;
    for (let i = 0; i < updates; i++) {
        const index = timesteps.length - 1 - i;
        const sigma = tableSigmas[timesteps[index]];
        const scale = Math.sqrt(1 + sigma * sigma);
        const scaled = x.map((value) => value * scale);
        const denoised = await denoiser(scaled, sigma);
        const aT = alphas[index];
        const aPrev = alphasPrev[index];
        const sigmaT = eta * Math.sqrt((1 - aPrev) / (1 - aT) * (1 - aT / aPrev));
        const sqrtOneMinusAT = Math.sqrt(1 - aT);
        const sqrtAT = Math.sqrt(aT);
        const sqrtAPrev = Math.sqrt(aPrev);
        const dirScale = Math.sqrt(1 - aPrev - sigmaT ** 2);
        const fresh = sigmaT > 0 ? noise(sigma, Math.sqrt((1 - aPrev) / aPrev)) : null;
        const predX0 = new Float64Array(x.length);
        const next = new Float64Array(x.length);
        for (let j = 0; j < x.length; j++) {
            const eps = (scaled[j] - denoised[j]) / sigma;
            predX0[j] = (x[j] - sqrtOneMinusAT * eps) / sqrtAT;
            next[j] = sqrtAPrev * predX0[j] + dirScale * eps + (fresh ? sigmaT * fresh[j] : 0);
        }
        x = next;
        await onStep?.(i, x, predX0);
    }
    return x;
}
