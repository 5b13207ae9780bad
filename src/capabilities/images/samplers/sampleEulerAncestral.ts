import type { Denoiser } from "./Denoiser.js";
import { getAncestralStep } from "./getAncestralStep.js";
import type { NoiseSource } from "./NoiseSource.js";
import type { StepCallback } from "./StepCallback.js";

/**
 * k-diffusion `sample_euler_ancestral` ("Euler a"): an Euler step down to sigma_down, then fresh noise · sigma_up
 * back up to σᵢ₊₁. No noise on the last step (σ = 0), so N − 1 noise draws for N steps.
 */
export async function sampleEulerAncestral(denoiser: Denoiser, x: Float64Array, sigmas: ArrayLike<number>, noise: NoiseSource, options: {eta?: number, sNoise?: number} = {}, onStep?: StepCallback): Promise<Float64Array> {
    const eta = options.eta ?? 1;
    const sNoise = options.sNoise ?? 1;
    for (let i = 0; i < sigmas.length - 1; i++) {
        const sigma = sigmas[i];
        const sigmaNext = sigmas[i + 1];
        const denoised = await denoiser(x, sigma);
        const {sigmaDown, sigmaUp} = getAncestralStep(sigma, sigmaNext, eta);
        const dt = sigmaDown - sigma;
        const next = new Float64Array(x.length);
        for (let j = 0; j < x.length; j++)
            next[j] = x[j] + (x[j] - denoised[j]) / sigma * dt;
        if (sigmaNext > 0) {
            const fresh = noise(sigma, sigmaNext);
            for (let j = 0; j < x.length; j++)
                next[j] = next[j] + fresh[j] * sNoise * sigmaUp;
        }
        x = next;
        await onStep?.(i, x, denoised);
    }
    return x;
}
