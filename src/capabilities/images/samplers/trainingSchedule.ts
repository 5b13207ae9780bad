import type { SchedulerConfig } from "./parseSchedulerConfig.js";
import { torchLinspace } from "./torchLinspace.js";

/** The discrete training schedule of a Stable Diffusion model, float64 (k-diffusion `DiscreteSchedule`). */
export type TrainingSchedule = {
    config: SchedulerConfig;
    betas: Float64Array;
    /** ᾱ_t = Π(1 − β), t = 0 … T−1. */
    alphasCumprod: Float64Array;
    /** The model sigma table σ_t = √((1 − ᾱ_t)/ᾱ_t), ascending in t. */
    sigmas: Float64Array;
    logSigmas: Float64Array;
    /** σ_0 and σ_{T−1}, the table ends (k-diffusion `sigma_min` / `sigma_max`). */
    sigmaMin: number;
    sigmaMax: number;
};

/**
 * Betas, ᾱ and the model sigma table of a scheduler config, all in float64. For "scaled_linear" this is ldm's
 * `make_beta_schedule("linear")` (torch.linspace of √β in float64, squared), which is what A1111's CompVis models
 * carry; diffusers builds the betas in float32 instead (a difference of ~1e-8 relative, see docs/samplers.md).
 */
export function trainingSchedule(config: SchedulerConfig): TrainingSchedule {
    const count = config.numTrainTimesteps;
    const betas = config.trainedBetas != null ? Float64Array.from(config.trainedBetas) : makeBetas(config);
    const alphasCumprod = new Float64Array(count);
    let product = 1;
    for (let t = 0; t < count; t++) {
        product *= 1 - betas[t];
        alphasCumprod[t] = product;
    }
    const sigmas = new Float64Array(count);
    const logSigmas = new Float64Array(count);
    for (let t = 0; t < count; t++) {
        sigmas[t] = Math.sqrt((1 - alphasCumprod[t]) / alphasCumprod[t]);
        logSigmas[t] = Math.log(sigmas[t]);
    }
    return {config, betas, alphasCumprod, sigmas, logSigmas, sigmaMin: sigmas[0], sigmaMax: sigmas[count - 1]};
}

function makeBetas(config: SchedulerConfig): Float64Array {
    const count = config.numTrainTimesteps;
    switch (config.betaSchedule) {
        case "linear":
            return torchLinspace(config.betaStart, config.betaEnd, count);
        case "scaled_linear":
            return torchLinspace(Math.sqrt(config.betaStart), Math.sqrt(config.betaEnd), count).map((root) => root * root);
        case "squaredcos_cap_v2": {
            // diffusers betas_for_alpha_bar (cosine, max_beta 0.999).
            const alphaBar = (t: number) => Math.cos((t + 0.008) / 1.008 * Math.PI / 2) ** 2;
            return Float64Array.from({length: count}, (_, i) => Math.min(1 - alphaBar((i + 1) / count) / alphaBar(i / count), 0.999));
        }
    }
}
