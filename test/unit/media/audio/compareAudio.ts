/**
 * Finds the lag (decoded[i + lag] ≈ reference[i]) within [0, maxLag] that maximises the cross-correlation,
 * the way codec delay is measured when the stream carries no gapless information.
 */
export function bestLag(reference: Float32Array, decoded: Float32Array, maxLag: number): number {
    let best = 0;
    let bestScore = -Infinity;
    const length = Math.min(reference.length, decoded.length - maxLag);
    for (let lag = 0; lag <= maxLag; lag++) {
        let score = 0;
        for (let i = 0; i < length; i++) score += reference[i] * decoded[i + lag];
        if (score > bestScore) {
            bestScore = score;
            best = lag;
        }
    }
    return best;
}

/** Signal-to-noise ratio in dB of `decoded` (from `offset`) against `reference`, over the first `length` samples. */
export function snrDb(reference: Float32Array, decoded: Float32Array, offset = 0, length = reference.length): number {
    let signal = 0;
    let noise = 0;
    for (let i = 0; i < length; i++) {
        const error = (decoded[i + offset] ?? 0) - reference[i];
        signal += reference[i] ** 2;
        noise += error ** 2;
    }
    return 10 * Math.log10(signal / noise);
}

/** The largest absolute sample difference. */
export function maxDifference(a: Float32Array, b: Float32Array): number {
    let max = 0;
    for (let i = 0; i < Math.max(a.length, b.length); i++) max = Math.max(max, Math.abs((a[i] ?? 0) - (b[i] ?? 0)));
    return max;
}

/** Amplitude of the component at `frequency` (single-bin DFT), e.g. 0.5 for 0.5·sin. */
export function toneAmplitude(samples: Float32Array, sampleRate: number, frequency: number): number {
    let re = 0;
    let im = 0;
    for (let i = 0; i < samples.length; i++) {
        const angle = (2 * Math.PI * frequency * i) / sampleRate;
        re += samples[i] * Math.cos(angle);
        im -= samples[i] * Math.sin(angle);
    }
    return (2 * Math.hypot(re, im)) / samples.length;
}
