import { expect } from "vitest";
import type { AudioFormat } from "../../src/media/audio/audioFormats.js";
import { resample } from "../../src/media/audio/resample.js";
import { bestLag, maxDifference, snrDb } from "../unit/media/audio/compareAudio.js";
import type { DecodedSpeech } from "./decodeSpeech.js";

/** One 16-bit step, plus float noise from the resampler: what a lossless format may change. */
const losslessTolerance = 1 / 0x7FFF + 1e-6;

/**
 * Asserts decoded audio is the reference (mono float samples at `modelRate`) as each format
 * promises: wav and flac at the model's rate, pcm at 24 kHz (resampled), all three equal within
 * 16-bit quantisation and of exactly the same length; the lossy codecs mono at their rate, aligned
 * (a known codec delay, or one found by cross-correlation), covering the whole reference, above an
 * SNR floor that broken or misaligned audio does not reach (<= 0 dB).
 */
export function expectSpeechMatches(format: AudioFormat, decoded: DecodedSpeech, reference: Float32Array, modelRate: number,
    /** Lower for noise-like audio (random-weight models), which a perceptual codec keeps less exactly than tones. */
    lossyFloorDb: {mp3: number, opus: number, aac: number} = {mp3: 12, opus: 8, aac: 9}) {
    expect(decoded.channels).toBe(1);
    switch (format) {
        case "wav": case "flac": {
            expect(decoded.sampleRate).toBe(modelRate);
            expect(decoded.samples.length).toBe(reference.length);
            expect(maxDifference(decoded.samples, reference)).toBeLessThanOrEqual(losslessTolerance);
            return;
        }
        case "pcm": {
            const expected = resample(reference, modelRate, 24_000);
            expect(decoded.sampleRate).toBe(24_000);
            expect(decoded.samples.length).toBe(expected.length);
            expect(maxDifference(decoded.samples, expected)).toBeLessThanOrEqual(losslessTolerance);
            return;
        }
        case "mp3": {
            expect(decoded.sampleRate).toBe(modelRate);
            // LAME's encoder delay (576) plus mpg123's decoder delay (529).
            const lag = 1105;
            expect(bestLag(reference, decoded.samples, 4096)).toBe(lag);
            expect(decoded.samples.length - lag).toBeGreaterThanOrEqual(reference.length);
            expect(snrDb(reference, decoded.samples, lag)).toBeGreaterThan(lossyFloorDb.mp3);
            return;
        }
        case "opus": {
            expect(decoded.sampleRate).toBe(48_000);
            const expected = resample(reference, modelRate, 48_000);
            // Pre-skip and the end granule trim exactly.
            expect(decoded.samples.length).toBe(expected.length);
            expect(bestLag(expected, decoded.samples, 4096)).toBe(0);
            expect(snrDb(expected, decoded.samples)).toBeGreaterThan(lossyFloorDb.opus);
            return;
        }
        case "aac": {
            expect([modelRate, 2 * modelRate]).toContain(decoded.sampleRate);
            const expected = resample(reference, modelRate, decoded.sampleRate);
            const lag = bestLag(expected, decoded.samples, 4096);
            // ADTS has no gapless info; FAAD2 may withhold one frame (2048 samples at the doubled rate).
            const covered = decoded.samples.length - lag;
            expect(covered).toBeGreaterThanOrEqual(expected.length - 2048);
            expect(snrDb(expected, decoded.samples, lag, Math.min(expected.length, covered))).toBeGreaterThan(lossyFloorDb.aac);
            return;
        }
    }
}
