/**
 * k-diffusion's D(x, σ): an estimate of the clean latent x0 for x = x0 + σ·ε. Async because the network behind it runs
 * in ONNX Runtime. It must not modify `x`; the samplers never modify the array it returns.
 */
export type Denoiser = (x: Float64Array, sigma: number) => Promise<Float64Array>;
