import { describe, expect, it } from "vitest";
import { createAudioEncoder } from "../../../../src/media/audio/createAudioEncoder.js";
import { resample } from "../../../../src/media/audio/resample.js";
import { parseWav, pcm16ToFloat } from "../../../support/decodeSpeech.js";
import { maxDifference } from "./compareAudio.js";
import { encodeChunks } from "./encodeChunks.js";
import { mixedSignal, randomChunks, sentenceLikeSignal } from "./signals.js";

/** One 16-bit step: what quantisation may change (float → int16 → float). */
const step = 1 / 0x7FFF;

describe.each([24_000, 16_000])("wav from %i Hz input", inputSampleRate => {
    const input = mixedSignal(inputSampleRate, 1.5);

    it("not streamed: exact RIFF and data sizes, 16-bit mono at the model's rate, samples exact", async () => {
        const encoder = await createAudioEncoder("wav", {inputSampleRate, streaming: false});
        expect(encoder.contentType).toBe("audio/wav");
        const {bytes} = await encodeChunks(encoder, randomChunks(input, 7));
        const wav = parseWav(bytes);
        // parseWav accepts 16-bit integer PCM only.
        expect({channels: wav.channels, sampleRate: wav.sampleRate}).toEqual({channels: 1, sampleRate: inputSampleRate});
        expect(wav.declared).toEqual({riffSize: bytes.length - 8, dataSize: input.length * 2});
        expect(maxDifference(wav.samples, input)).toBeLessThanOrEqual(step);
    });

    it("streamed: a header with 0xFFFFFFFF sizes in the first push, then samples as they come; same audio as one-shot", async () => {
        const encoder = await createAudioEncoder("wav", {inputSampleRate, streaming: true});
        const chunks = randomChunks(input, 8);
        const {outputs, bytes} = await encodeChunks(encoder, chunks);
        expect(outputs[0].length).toBe(44 + chunks[0].length * 2);
        expect(outputs[1].length).toBe(chunks[1].length * 2);
        const wav = parseWav(bytes);
        expect(wav.declared).toEqual({riffSize: 0xFFFFFFFF, dataSize: 0xFFFFFFFF});
        expect(wav.samples.length).toBe(input.length);
        expect(maxDifference(wav.samples, input)).toBeLessThanOrEqual(step);
    });
});

describe("pcm", () => {
    it("is raw s16le at 24 kHz: 24 kHz input passes through exactly, however it is chunked", async () => {
        const input = sentenceLikeSignal(24_000);
        const encoder = await createAudioEncoder("pcm", {inputSampleRate: 24_000, streaming: true});
        expect(encoder.contentType).toBe("audio/pcm");
        expect(encoder.sampleRate).toBe(24_000);
        const {bytes} = await encodeChunks(encoder, randomChunks(input, 9));
        expect(maxDifference(pcm16ToFloat(bytes), input)).toBeLessThanOrEqual(step);
    });

    it("resamples 16 kHz input to 24 kHz: same as the one-shot resample, streamed or not, and bytes arrive during the stream", async () => {
        const input = sentenceLikeSignal(16_000);
        const expected = resample(input, 16_000, 24_000);
        for (const seed of [10, 11]) {
            const encoder = await createAudioEncoder("pcm", {inputSampleRate: 16_000, streaming: true});
            const {outputs, bytes} = await encodeChunks(encoder, randomChunks(input, seed));
            expect(outputs.slice(0, -1).some(output => output.length > 0)).toBe(true);
            const decoded = pcm16ToFloat(bytes);
            expect(decoded.length).toBe(Math.ceil((input.length * 3) / 2));
            expect(maxDifference(decoded, expected)).toBeLessThanOrEqual(step);
        }
    });
});
