/** Synthesis hop: 15 ms, so frames (twice that) are about one or two pitch periods of a low voice long. */
const hopSeconds = 0.015;

/**
 * Pitch-preserving time stretch by WSOLA (waveform-similarity overlap-add, Verhelst & Roelands 1993), for speech models
 * without a speed input. Output length is round(length / speed): speed 2 is twice as fast.
 * Frames of 2·hop samples are overlap-added every hop with a Hann window (which sums to one at 50 % overlap);
 * each frame is taken near its nominal input position, shifted by up to half a hop to where it best continues the
 * previous frame (maximum cross-correlation), so periods line up and no phase jumps are heard.
 */
export function timeStretch(samples: Float32Array, sampleRate: number, speed: number): Float32Array {
    if (!(speed >= 0.25 && speed <= 4)) throw new RangeError(`speed must be between 0.25 and 4, got ${speed}`);
    if (speed === 1) return samples.slice();
    const hop = Math.max(1, Math.round(hopSeconds * sampleRate));
    const frame = 2 * hop;
    const tolerance = Math.floor(hop / 2);
    const outputLength = Math.round(samples.length / speed);
    const at = (index: number) => (index >= 0 && index < samples.length ? samples[index] : 0);
    const window = Float32Array.from({length: frame}, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / frame));
    const output = new Float32Array(outputLength + frame);

    let previous = 0;
    for (let m = 0; m * hop < outputLength; m++) {
        let position = 0;
        if (m > 0) {
            const nominal = Math.round(m * hop * speed);
            // Where the previous frame's own signal goes on: the ideal start of the overlapping half.
            const natural = previous + hop;
            let bestScore = -Infinity;
            for (let shift = -tolerance; shift <= tolerance; shift++) {
                const candidate = nominal + shift;
                let score = 0;
                for (let i = 0; i < hop; i++) score += at(natural + i) * at(candidate + i);
                if (score > bestScore) {
                    bestScore = score;
                    position = candidate;
                }
            }
        }
        const outputStart = m * hop;
        for (let i = 0; i < frame; i++) output[outputStart + i] += window[i] * at(position + i);
        previous = position;
    }
    // The first half-frame has no frame before it to overlap, only a rising window: it is the input's start, unfaded.
    for (let i = 0; i < Math.min(hop, outputLength); i++) output[i] = at(i);
    return output.slice(0, outputLength);
}
