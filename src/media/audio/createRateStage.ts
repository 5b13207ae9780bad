import { Resampler } from "./Resampler.js";

/** The resampling step in front of a codec: a Resampler, or a pass-through when the rates already match. */
export type RateStage = {
    push(samples: Float32Array): Float32Array;
    end(): Float32Array;
};

export function createRateStage(fromRate: number, toRate: number): RateStage {
    if (fromRate === toRate) return {push: samples => samples, end: () => new Float32Array(0)};
    return new Resampler(fromRate, toRate);
}
