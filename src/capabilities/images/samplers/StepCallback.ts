/**
 * Called (and awaited) after each sampler step: `i` is the 0-based step, `x` the latent after it (for DDIM the VP
 * latent z), `denoised` the step's x0 estimate (what a preview decodes). Throwing cancels the run: the sampler rejects
 * with that error and makes no further model calls. The arrays are fresh per step and never modified afterwards.
 */
export type StepCallback = (i: number, x: Float64Array, denoised: Float64Array) => void | Promise<void>;
