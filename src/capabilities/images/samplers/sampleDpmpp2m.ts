import type { Denoiser } from "./Denoiser.js";
import type { StepCallback } from "./StepCallback.js";

/**
 * k-diffusion `sample_dpmpp_2m` (DPM-Solver++(2M)), in its variables t = −log σ, σ = exp(−t) (the round trip is kept
 * on purpose: it is what the reference computes). The first and the last step are first order.
 */
export async function sampleDpmpp2m(denoiser: Denoiser, x: Float64Array, sigmas: ArrayLike<number>, onStep?: StepCallback): Promise<Float64Array> {
    const sigmaFn = (t: number) => Math.exp(-t);
    const tFn = (sigma: number) => -Math.log(sigma);
    let oldDenoised: Float64Array | null = null;
    for (let i = 0; i < sigmas.length - 1; i++) {
        const denoised = await denoiser(x, sigmas[i]);
        const t = tFn(sigmas[i]);
        const tNext = tFn(sigmas[i + 1]);
        const h = tNext - t;
        const ratio = sigmaFn(tNext) / sigmaFn(t);
        const factor = Math.expm1(-h);
        const next = new Float64Array(x.length);
        if (oldDenoised == null || sigmas[i + 1] === 0) {
            for (let j = 0; j < x.length; j++)
                next[j] = ratio * x[j] - factor * denoised[j];
        } else {
            const hLast = t - tFn(sigmas[i - 1]);
            const r = hLast / h;
            const current = 1 + 1 / (2 * r);
            const previous = 1 / (2 * r);
            for (let j = 0; j < x.length; j++)
                next[j] = ratio * x[j] - factor * (current * denoised[j] - previous * oldDenoised[j]);
        }
        oldDenoised = denoised;
        x = next;
        await onStep?.(i, x, denoised);
    }
    return x;
}
