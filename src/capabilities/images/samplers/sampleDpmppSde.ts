import type { Denoiser } from "./Denoiser.js";
import { getAncestralStep } from "./getAncestralStep.js";
import type { NoiseSource } from "./NoiseSource.js";
import type { StepCallback } from "./StepCallback.js";

/**
 * k-diffusion `sample_dpmpp_sde` (DPM-Solver++ SDE, r = 1/2): per step a stochastic half step to σ_s = exp(−(t + h·r))
 * with noise(σᵢ, σ_s), a second model call there, then the full stochastic step with noise(σᵢ, σᵢ₊₁); a plain Euler
 * step into σ = 0. The noise source should be a Brownian tree (`brownianTreeNoise`) so the two draws of a step are
 * correlated like increments of one Brownian path, as in A1111.
 */
export async function sampleDpmppSde(denoiser: Denoiser, x: Float64Array, sigmas: ArrayLike<number>, noise: NoiseSource, options: {eta?: number, sNoise?: number, r?: number} = {}, onStep?: StepCallback): Promise<Float64Array> {
    const eta = options.eta ?? 1;
    const sNoise = options.sNoise ?? 1;
    const r = options.r ?? 1 / 2;
    const sigmaFn = (t: number) => Math.exp(-t);
    const tFn = (sigma: number) => -Math.log(sigma);
    for (let i = 0; i < sigmas.length - 1; i++) {
        const denoised = await denoiser(x, sigmas[i]);
        const next = new Float64Array(x.length);
        if (sigmas[i + 1] === 0) {
            const dt = sigmas[i + 1] - sigmas[i];
            for (let j = 0; j < x.length; j++)
                next[j] = x[j] + (x[j] - denoised[j]) / sigmas[i] * dt;
        } else {
            const t = tFn(sigmas[i]);
            const tNext = tFn(sigmas[i + 1]);
            const h = tNext - t;
            const s = t + h * r;
            const fac = 1 / (2 * r);

            // Step 1
            const half = getAncestralStep(sigmaFn(t), sigmaFn(s), eta);
            const sDown = tFn(half.sigmaDown);
            const ratio1 = sigmaFn(sDown) / sigmaFn(t);
            const factor1 = Math.expm1(t - sDown);
            const noise1 = noise(sigmaFn(t), sigmaFn(s));
            const x2 = new Float64Array(x.length);
            for (let j = 0; j < x.length; j++)
                x2[j] = (ratio1 * x[j] - factor1 * denoised[j]) + noise1[j] * sNoise * half.sigmaUp;
            const denoised2 = await denoiser(x2, sigmaFn(s));

            // Step 2
            const full = getAncestralStep(sigmaFn(t), sigmaFn(tNext), eta);
            const tNextDown = tFn(full.sigmaDown);
            const ratio2 = sigmaFn(tNextDown) / sigmaFn(t);
            const factor2 = Math.expm1(t - tNextDown);
            const noise2 = noise(sigmaFn(t), sigmaFn(tNext));
            for (let j = 0; j < x.length; j++) {
                const denoisedD = (1 - fac) * denoised[j] + fac * denoised2[j];
                next[j] = (ratio2 * x[j] - factor2 * denoisedD) + noise2[j] * sNoise * full.sigmaUp;
            }
        }
        x = next;
        await onStep?.(i, x, denoised);
    }
    return x;
}
