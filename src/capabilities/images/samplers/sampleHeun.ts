import type { Denoiser } from "./Denoiser.js";
import type { StepCallback } from "./StepCallback.js";

/**
 * k-diffusion `sample_heun` with s_churn = 0 (A1111's arguments): Heun's method (the trapezoid of the slopes at σᵢ
 * and at the Euler guess for σᵢ₊₁), except a plain Euler step into σ = 0. 2N − 1 model calls.
 */
export async function sampleHeun(denoiser: Denoiser, x: Float64Array, sigmas: ArrayLike<number>, onStep?: StepCallback): Promise<Float64Array> {
    for (let i = 0; i < sigmas.length - 1; i++) {
        const sigma = sigmas[i];
        const sigmaNext = sigmas[i + 1];
        const denoised = await denoiser(x, sigma);
        const dt = sigmaNext - sigma;
        const d = new Float64Array(x.length);
        for (let j = 0; j < x.length; j++)
            d[j] = (x[j] - denoised[j]) / sigma;
        const next = new Float64Array(x.length);
        if (sigmaNext === 0) {
            for (let j = 0; j < x.length; j++)
                next[j] = x[j] + d[j] * dt;
        } else {
            const x2 = new Float64Array(x.length);
            for (let j = 0; j < x.length; j++)
                x2[j] = x[j] + d[j] * dt;
            const denoised2 = await denoiser(x2, sigmaNext);
            for (let j = 0; j < x.length; j++) {
                const d2 = (x2[j] - denoised2[j]) / sigmaNext;
                next[j] = x[j] + (d[j] + d2) / 2 * dt;
            }
        }
        x = next;
        await onStep?.(i, x, denoised);
    }
    return x;
}
