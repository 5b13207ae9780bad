/**
 * Fresh standard-normal noise for the step from `sigma` to `sigmaNext` (k-diffusion's `noise_sampler(sigma, sigma_next)`).
 * Samplers call it in k-diffusion's order; the returned array is read, never modified.
 */
export type NoiseSource = (sigma: number, sigmaNext: number) => Float64Array;
