/**
 * Float samples to 16-bit PCM: clipped to [-1, 1], scaled asymmetrically so that -1 and +1 both reach full scale,
 * rounded to nearest (truncation would add a DC offset of half a step).
 */
export function toInt16(samples: Float32Array): Int16Array {
    const out = new Int16Array(samples.length);
    for (let i = 0; i < samples.length; i++) {
        const x = Math.max(-1, Math.min(1, samples[i]));
        out[i] = Math.round(x < 0 ? x * 0x8000 : x * 0x7FFF);
    }
    return out;
}
