import type { TrainingSchedule } from "./trainingSchedule.js";

/**
 * k-diffusion `DiscreteSchedule.sigma_to_t`: the fractional timestep whose log-interpolated sigma is `sigma`, clamped
 * to [0, T−1]; with `quantize` the nearest table index by |log σ − log σ_t| (first one on a tie). A sigma that is a
 * table entry maps to exactly its integer index.
 */
export function sigmaToTimestep(schedule: TrainingSchedule, sigma: number, options: {quantize?: boolean} = {}): number {
    const logSigmas = schedule.logSigmas;
    const logSigma = Math.log(sigma);
    if (options.quantize) {
        let best = 0;
        for (let t = 1; t < logSigmas.length; t++)
            if (Math.abs(logSigma - logSigmas[t]) < Math.abs(logSigma - logSigmas[best]))
                best = t;
        return best;
    }
    // Last index whose log sigma is <= log_sigma (0 if none), at most T−2.
    let lowIndex = 0;
    for (let t = 0; t < logSigmas.length; t++)
        if (logSigma - logSigmas[t] >= 0)
            lowIndex = t;
    lowIndex = Math.min(lowIndex, logSigmas.length - 2);
    const highIndex = lowIndex + 1;
    const low = logSigmas[lowIndex];
    const high = logSigmas[highIndex];
    const w = Math.min(Math.max((low - logSigma) / (low - high), 0), 1);
    return (1 - w) * lowIndex + w * highIndex;
}
