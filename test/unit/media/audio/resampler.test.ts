import { describe, expect, it } from "vitest";
import { resample } from "../../../../src/media/audio/resample.js";
import { Resampler } from "../../../../src/media/audio/Resampler.js";
import { maxDifference, toneAmplitude } from "./compareAudio.js";
import { mixedSignal, randomChunks } from "./signals.js";

const sine = (frequency: number, sampleRate: number, seconds: number, amplitude = 0.5) =>
    Float32Array.from({length: Math.round(sampleRate * seconds)}, (_, i) => amplitude * Math.sin((2 * Math.PI * frequency * i) / sampleRate));

describe("resample", () => {
    it("turns a 1 kHz sine at 16 kHz into a 1 kHz sine at 24 kHz of the same amplitude and length, with no images or aliases", () => {
        const output = resample(sine(1000, 16_000, 1), 16_000, 24_000);
        expect(output.length).toBe(24_000);
        // Away from the edges, where the filter sees silence beyond the signal.
        const middle = output.subarray(2400, 21_600);
        expect(toneAmplitude(middle, 24_000, 1000)).toBeCloseTo(0.5, 3);
        // Upsampling by 3/2 puts images at 16k ± 1k; folded back at 24 kHz they would land at 9 and 7 kHz.
        for (const frequency of [7000, 9000, 11_000, 500, 2000])
            expect(toneAmplitude(middle, 24_000, frequency), `${frequency} Hz`).toBeLessThan(0.5e-4);
        // And the waveform itself matches an ideal 1 kHz sine sampled at 24 kHz (to -80 dB).
        expect(maxDifference(middle, sine(1000, 24_000, 1).subarray(2400, 21_600))).toBeLessThan(1e-4);
    });

    it("downsamples 24 kHz to 16 kHz removing what 16 kHz cannot hold (a 10 kHz tone would alias to 6 kHz)", () => {
        const input = new Float32Array(24_000);
        const low = sine(1000, 24_000, 1);
        const high = sine(10_000, 24_000, 1);
        for (let i = 0; i < input.length; i++) input[i] = low[i] + high[i];
        const middle = resample(input, 24_000, 16_000).subarray(1600, 14_400);
        expect(toneAmplitude(middle, 16_000, 1000)).toBeCloseTo(0.5, 3);
        expect(toneAmplitude(middle, 16_000, 6000)).toBeLessThan(0.5e-4);
    });

    it("gives the same samples however the input is chunked", () => {
        const input = mixedSignal(16_000, 1.3);
        const whole = resample(input, 16_000, 24_000);
        for (const seed of [1, 2, 3]) {
            const resampler = new Resampler(16_000, 24_000);
            const parts = randomChunks(input, seed, 700).map(chunk => resampler.push(chunk));
            parts.push(resampler.end());
            const streamed = Float32Array.from(parts.flatMap(part => Array.from(part)));
            expect(streamed.length).toBe(whole.length);
            expect(maxDifference(streamed, whole)).toBe(0);
        }
    });

    it("returns output during the stream, not only at the end", () => {
        const resampler = new Resampler(16_000, 24_000);
        expect(resampler.push(new Float32Array(1600)).length).toBeGreaterThan(2000);
    });
});
