import { describe, expect, it } from "vitest";
import { createAudioEncoder } from "../../../../src/capabilities/speech/audio/createAudioEncoder.js";
import { resample } from "../../../../src/capabilities/speech/audio/resample.js";
import { maxDifference } from "./compareAudio.js";
import { encodeChunks } from "./encodeChunks.js";
import { mixedSignal, randomChunks, sentenceLikeSignal } from "./signals.js";

/** A by-hand RIFF/WAVE reader: the fmt chunk's fields, the data chunk's declared size and its samples as floats. */
function parseWav(bytes: Uint8Array) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    const text = (offset: number) => String.fromCharCode(...bytes.subarray(offset, offset + 4));
    expect(text(0)).toBe("RIFF");
    expect(text(8)).toBe("WAVE");
    let offset = 12;
    let format: {audioFormat: number; channels: number; sampleRate: number; bitsPerSample: number} | undefined;
    while (offset + 8 <= bytes.length) {
        const id = text(offset);
        const size = view.getUint32(offset + 4, true);
        if (id === "fmt ")
            format = {audioFormat: view.getUint16(offset + 8, true), channels: view.getUint16(offset + 10, true), sampleRate: view.getUint32(offset + 12, true), bitsPerSample: view.getUint16(offset + 22, true)};
        if (id === "data") {
            const start = offset + 8;
            const end = size === 0xFFFFFFFF ? bytes.length : start + size;
            return {riffSize: view.getUint32(4, true), dataSize: size, format, samples: pcm16ToFloat(bytes.subarray(start, end))};
        }
        offset += 8 + size;
    }
    throw new Error("no data chunk");
}

function pcm16ToFloat(bytes: Uint8Array): Float32Array {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    return Float32Array.from({length: bytes.length / 2}, (_, i) => view.getInt16(2 * i, true) / 0x8000);
}

/** One 16-bit step: what quantisation may change (float → int16 → float). */
const step = 1 / 0x7FFF;

describe.each([24_000, 16_000])("wav from %i Hz input", inputSampleRate => {
    const input = mixedSignal(inputSampleRate, 1.5);

    it("not streamed: exact RIFF and data sizes, 16-bit mono at the model's rate, samples exact", async () => {
        const encoder = await createAudioEncoder("wav", {inputSampleRate, streaming: false});
        expect(encoder.contentType).toBe("audio/wav");
        const {bytes} = await encodeChunks(encoder, randomChunks(input, 7));
        const wav = parseWav(bytes);
        expect(wav.format).toEqual({audioFormat: 1, channels: 1, sampleRate: inputSampleRate, bitsPerSample: 16});
        expect(wav.riffSize).toBe(bytes.length - 8);
        expect(wav.dataSize).toBe(input.length * 2);
        expect(maxDifference(wav.samples, input)).toBeLessThanOrEqual(step);
    });

    it("streamed: a header with 0xFFFFFFFF sizes in the first push, then samples as they come; same audio as one-shot", async () => {
        const encoder = await createAudioEncoder("wav", {inputSampleRate, streaming: true});
        const chunks = randomChunks(input, 8);
        const {outputs, bytes} = await encodeChunks(encoder, chunks);
        expect(outputs[0].length).toBe(44 + chunks[0].length * 2);
        expect(outputs[1].length).toBe(chunks[1].length * 2);
        const wav = parseWav(bytes);
        expect(wav.riffSize).toBe(0xFFFFFFFF);
        expect(wav.dataSize).toBe(0xFFFFFFFF);
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
