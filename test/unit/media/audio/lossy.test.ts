import { describe, expect, it } from "vitest";
import { createAudioEncoder } from "../../../../src/media/audio/createAudioEncoder.js";
import { resample } from "../../../../src/media/audio/resample.js";
import { bestLag, maxDifference, snrDb } from "./compareAudio.js";
import { decodeLossy } from "./decodeLossy.js";
import { encodeChunks } from "./encodeChunks.js";
import { mixedSignal, randomChunks, sentenceLikeSignal } from "./signals.js";

type Case = {
    format: "mp3" | "opus" | "aac";
    contentType: string;
    inputSampleRate: number;
    /** Rates the independent decoder may hand out for this stream. */
    decodedRates: number[];
    /** Where the input starts in the decoded audio: exact when known, else a range found by cross-correlation. */
    lag: number | [number, number];
    /** Decoded samples past the lag that may be missing at the end (a decoder without gapless info withholding a frame). */
    tailLoss: number;
    /** Waveform SNR floor: perceptual codecs at speech bitrates do not preserve waveforms much better; misaligned or broken audio scores <= 0 dB. */
    minSnrDb: number;
};

const cases: Case[] = [
    // LAME's encoder delay (576) plus mpg123's decoder delay (529); the last frame's padding stays in (no LAME tag).
    {format: "mp3", contentType: "audio/mpeg", inputSampleRate: 24_000, decodedRates: [24_000], lag: 1105, tailLoss: 0, minSnrDb: 12},
    {format: "mp3", contentType: "audio/mpeg", inputSampleRate: 16_000, decodedRates: [16_000], lag: 1105, tailLoss: 0, minSnrDb: 12},
    // OpusHead's pre-skip and the final granule trim exactly: no lag, no extra or missing sample.
    {format: "opus", contentType: "audio/ogg", inputSampleRate: 24_000, decodedRates: [48_000], lag: 0, tailLoss: 0, minSnrDb: 8},
    {format: "opus", contentType: "audio/ogg", inputSampleRate: 16_000, decodedRates: [48_000], lag: 0, tailLoss: 0, minSnrDb: 8},
    // ADTS carries no gapless info; FAAD2 decodes LC at <= 24 kHz at twice the rate (possible implicit SBR, 962 samples
    // of delay) and withholds one frame (2048 samples there).
    {format: "aac", contentType: "audio/aac", inputSampleRate: 24_000, decodedRates: [24_000, 48_000], lag: [0, 4096], tailLoss: 2048, minSnrDb: 9},
    {format: "aac", contentType: "audio/aac", inputSampleRate: 16_000, decodedRates: [16_000, 32_000], lag: [0, 4096], tailLoss: 2048, minSnrDb: 9}
];

describe.each(cases)("$format from $inputSampleRate Hz", ({format, contentType, inputSampleRate, decodedRates, lag, tailLoss, minSnrDb}) => {
    it.each([
        ["mixed signal", mixedSignal(inputSampleRate, 2)],
        ["sentence-like signal", sentenceLikeSignal(inputSampleRate)]
    ])("%s: decodes mono at the right rate, aligned, above the SNR floor; streamed (random chunks) decodes exactly like one-shot", async (_name, input) => {
        const streamedEncoder = await createAudioEncoder(format, {inputSampleRate, streaming: true});
        expect(streamedEncoder.contentType).toBe(contentType);
        const streamed = await encodeChunks(streamedEncoder, randomChunks(input, 31));
        const oneShot = await encodeChunks(await createAudioEncoder(format, {inputSampleRate, streaming: false}), [input]);
        // Bytes leave while samples are still coming in, not only at the end.
        expect(streamed.outputs.slice(0, -1).filter(output => output.length > 0).length).toBeGreaterThan(2);

        const decoded = await decodeLossy(format, streamed.bytes);
        expect(decodedRates).toContain(decoded.sampleRate);
        expect(decoded.channels).toBe(1);
        const reference = resample(input, inputSampleRate, decoded.sampleRate);
        const [minLag, maxLag] = typeof lag === "number" ? [lag, lag] : lag;
        const foundLag = bestLag(reference, decoded.samples, Math.max(maxLag, 4096));
        expect(foundLag).toBeGreaterThanOrEqual(minLag);
        expect(foundLag).toBeLessThanOrEqual(maxLag);
        const covered = decoded.samples.length - foundLag;
        expect(covered).toBeGreaterThanOrEqual(reference.length - tailLoss);
        if (format === "opus") expect(decoded.samples.length).toBe(reference.length);
        expect(snrDb(reference, decoded.samples, foundLag, Math.min(reference.length, covered))).toBeGreaterThan(minSnrDb);

        expect(maxDifference((await decodeLossy(format, oneShot.bytes)).samples, decoded.samples)).toBe(0);
    });
});
