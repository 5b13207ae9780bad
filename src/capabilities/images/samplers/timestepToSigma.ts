import type { TrainingSchedule } from "./trainingSchedule.js";

/**
 * k-diffusion `DiscreteSchedule.t_to_sigma`: log-linear interpolation of the sigma table at a fractional timestep.
 * Like the original, t is first cast to float32 (`t.float()`), and 1 − w is computed in float32 before it meets the
 * float64 table.
 */
export function timestepToSigma(schedule: TrainingSchedule, t: number): number {
    const t32 = Math.fround(t);
    const low = Math.floor(t32);
    const high = Math.ceil(t32);
    const w = Math.fround(t32 - low);
    const logSigma = Math.fround(1 - w) * schedule.logSigmas[low] + w * schedule.logSigmas[high];
    return Math.exp(logSigma);
}
