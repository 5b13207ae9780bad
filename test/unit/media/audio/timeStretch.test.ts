import { describe, expect, it } from "vitest";
import { timeStretch } from "../../../../src/media/audio/timeStretch.js";
import { toneAmplitude } from "./compareAudio.js";
import { sentenceLikeSignal } from "./signals.js";

const sampleRate = 24_000;

/** A voiced-like tone: 200 Hz fundamental with two weaker harmonics. */
const voiced = (seconds: number) => Float32Array.from({length: Math.round(sampleRate * seconds)}, (_, i) => {
    const t = i / sampleRate;
    return 0.4 * Math.sin(2 * Math.PI * 200 * t) + 0.15 * Math.sin(2 * Math.PI * 400 * t) + 0.1 * Math.sin(2 * Math.PI * 600 * t);
});

/** The strongest frequency between 50 and 1000 Hz, in 2 Hz steps. */
function dominantFrequency(samples: Float32Array): number {
    let best = 0;
    let bestAmplitude = 0;
    for (let frequency = 50; frequency <= 1000; frequency += 2) {
        const amplitude = toneAmplitude(samples, sampleRate, frequency);
        if (amplitude > bestAmplitude) {
            bestAmplitude = amplitude;
            best = frequency;
        }
    }
    return best;
}

describe("timeStretch", () => {
    it.each([0.25, 0.5, 0.8, 1.5, 2, 4])("speed %s scales the duration and keeps the pitch and level", speed => {
        const input = voiced(1);
        const output = timeStretch(input, sampleRate, speed);
        expect(output.length).toBe(Math.round(input.length / speed));
        const middle = output.subarray(Math.floor(output.length / 4), Math.floor((3 * output.length) / 4));
        expect(dominantFrequency(middle)).toBe(200);
        // Periods line up between frames, so the tone's level survives the overlap-add (a phase-blind OLA would cancel parts).
        expect(toneAmplitude(middle, sampleRate, 200)).toBeGreaterThan(0.36);
        expect(toneAmplitude(middle, sampleRate, 200)).toBeLessThan(0.44);
    });

    it("stretches speech-like audio to the requested length with its energy kept", () => {
        const input = sentenceLikeSignal(sampleRate);
        const output = timeStretch(input, sampleRate, 1.25);
        expect(output.length).toBe(Math.round(input.length / 1.25));
        const meanSquare = (samples: Float32Array) => samples.reduce((sum, x) => sum + x * x, 0) / samples.length;
        expect(meanSquare(output) / meanSquare(input)).toBeGreaterThan(0.8);
        expect(meanSquare(output) / meanSquare(input)).toBeLessThan(1.25);
    });

    it("returns a copy at speed 1 and rejects speeds outside 0.25..4", () => {
        const input = voiced(0.1);
        expect(timeStretch(input, sampleRate, 1)).toEqual(input);
        expect(() => timeStretch(input, sampleRate, 0.2)).toThrow(RangeError);
        expect(() => timeStretch(input, sampleRate, 4.5)).toThrow(RangeError);
    });
});
