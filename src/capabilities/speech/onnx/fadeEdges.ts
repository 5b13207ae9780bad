/** Length of the fade at each end of a sentence: 5 ms, far below a phoneme, above one period of a 200 Hz hum. */
const fadeSeconds = 0.005;

/**
 * Fades the first and last `fadeSeconds` of a sentence's audio in place (raised cosine) so that
 * consecutive sentences meet at zero: a model's output may start or stop mid-wave, and the step
 * between one sentence's last sample and the next one's first would be heard as a click. Only these
 * few milliseconds change; the model's own silence and samples are otherwise kept.
 */
export function fadeEdges(samples: Float32Array, sampleRate: number): Float32Array {
    const length = Math.min(Math.round(fadeSeconds * sampleRate), Math.floor(samples.length / 2));
    for (let index = 0; index < length; index++) {
        const gain = 0.5 - 0.5 * Math.cos(Math.PI * index / length);
        samples[index] *= gain;
        samples[samples.length - 1 - index] *= gain;
    }
    return samples;
}
