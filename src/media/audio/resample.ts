import { Resampler } from "./Resampler.js";

/** One-shot band-limited resampling of a whole signal (see Resampler for streaming). */
export function resample(samples: Float32Array, fromRate: number, toRate: number): Float32Array {
    if (fromRate === toRate) return samples.slice();
    const resampler = new Resampler(fromRate, toRate);
    const head = resampler.push(samples);
    const tail = resampler.end();
    const out = new Float32Array(head.length + tail.length);
    out.set(head);
    out.set(tail, head.length);
    return out;
}
