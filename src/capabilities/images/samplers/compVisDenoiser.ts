import type { Denoiser } from "./Denoiser.js";
import { sigmaToTimestep } from "./sigmaToTimestep.js";
import type { TrainingSchedule } from "./trainingSchedule.js";

/**
 * The network as the samplers see it: `(scaledX, t)` → eps (or v) for the latent `scaledX` = x·c_in at the fractional
 * training timestep t. Classifier-free guidance and batching happen inside (guidance on eps/v is the same as on D,
 * since D is affine in the network output).
 */
export type NoisePredictionNetwork = (scaledX: Float64Array, t: number) => Promise<Float64Array>;

/**
 * k-diffusion's `CompVisDenoiser` (eps) / `CompVisVDenoiser` (v_prediction): D(x, σ) from a network trained on the
 * discrete schedule, calling it with x·c_in and t = sigma_to_t(σ) (`quantize`: the nearest integer t, A1111's
 * "enable_quantization", off by default).
 * - eps: c_in = 1/√(σ²+1), c_out = −σ: D = x − σ·eps.
 * - v:   c_skip = 1/(σ²+1), c_out = −σ/√(σ²+1), c_in = 1/√(σ²+1): D = c_skip·x + c_out·v.
 */
export function compVisDenoiser(network: NoisePredictionNetwork, schedule: TrainingSchedule, options: {predictionType?: "epsilon" | "v_prediction", quantize?: boolean} = {}): Denoiser {
    const predictionType = options.predictionType ?? schedule.config.predictionType;
    const quantize = options.quantize ?? false;
    return async (x, sigma) => {
        const cIn = 1 / Math.sqrt(sigma ** 2 + 1);
        const t = sigmaToTimestep(schedule, sigma, {quantize});
        const output = await network(x.map((value) => value * cIn), t);
        if (output.length !== x.length)
            throw new Error(`The network returned ${output.length} values for a latent of ${x.length}.`);
        const denoised = new Float64Array(x.length);
        if (predictionType === "epsilon") {
            const cOut = -sigma;
            for (let j = 0; j < x.length; j++)
                denoised[j] = x[j] + output[j] * cOut;
        } else {
            const cSkip = 1 / (sigma ** 2 + 1);
            const cOut = -sigma / Math.sqrt(sigma ** 2 + 1);
            for (let j = 0; j < x.length; j++)
                denoised[j] = output[j] * cOut + x[j] * cSkip;
        }
        return denoised;
    };
}
