import type { Denoiser } from "./Denoiser.js";
import type { StepCallback } from "./StepCallback.js";

/**
 * k-diffusion `sample_euler` with A1111's arguments (s_churn = 0, so gamma = 0, sigma_hat = sigma and no noise is
 * added): x ← x + (x − D(x, σᵢ))/σᵢ · (σᵢ₊₁ − σᵢ). One model call per step.
 */
export async function sampleEuler(denoiser: Denoiser, x: Float64Array, sigmas: ArrayLike<number>, onStep?: StepCallback): Promise<Float64Array> {
    for (let i = 0; i < sigmas.length - 1; i++) {
        const sigma = sigmas[i];
        const denoised = await denoiser(x, sigma);
        const dt = sigmas[i + 1] - sigma;
        const next = new Float64Array(x.length);
        for (let j = 0; j < x.length; j++)
            next[j] = x[j] + (x[j] - denoised[j]) / sigma * dt;
        x = next;
        await onStep?.(i, x, denoised);
    }
    return x;
}
