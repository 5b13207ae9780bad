import { FLACDecoder } from "@wasm-audio-decoders/flac";
import { describe, expect, it } from "vitest";
import { createAudioEncoder } from "../../../../src/media/audio/createAudioEncoder.js";
import { maxDifference } from "./compareAudio.js";
import { encodeChunks } from "./encodeChunks.js";
import { mixedSignal, randomChunks, sentenceLikeSignal } from "./signals.js";

const step = 1 / 0x7FFF;

async function decodeFlac(bytes: Uint8Array) {
    const decoder = new FLACDecoder();
    await decoder.ready;
    try {
        return await decoder.decodeFile(bytes);
    } finally {
        decoder.free();
    }
}

/** STREAMINFO's 36-bit total-samples field (0 = unknown). */
function streamInfoTotalSamples(bytes: Uint8Array): number {
    const view = new DataView(bytes.buffer, bytes.byteOffset + 8, 34);
    return (view.getUint8(13) & 0x0F) * 2 ** 32 + view.getUint32(14);
}

describe.each([
    ["mixed signal at 24 kHz", 24_000, mixedSignal(24_000, 2)],
    ["sentence-like signal at 16 kHz", 16_000, sentenceLikeSignal(16_000)]
])("flac, %s", (_name, inputSampleRate, input) => {
    it.each([false, true])("streaming %s: decodes (independent decoder) to exactly the input, at the model's rate, mono", async streaming => {
        const encoder = await createAudioEncoder("flac", {inputSampleRate, streaming});
        expect(encoder.contentType).toBe("audio/flac");
        const {outputs, bytes} = await encodeChunks(encoder, randomChunks(input, 21));
        expect(String.fromCharCode(...bytes.subarray(0, 4))).toBe("fLaC");
        const decoded = await decodeFlac(bytes);
        expect(decoded.errors).toEqual([]);
        expect(decoded.sampleRate).toBe(inputSampleRate);
        expect(decoded.channelData.length).toBe(1);
        expect(decoded.samplesDecoded).toBe(input.length);
        expect(maxDifference(decoded.channelData[0], input)).toBeLessThanOrEqual(step);
        if (streaming) {
            // Frames leave during the stream, and the header, written before the length is known, says "unknown".
            expect(outputs.slice(0, -1).filter(output => output.length > 0).length).toBeGreaterThan(3);
            expect(streamInfoTotalSamples(bytes)).toBe(0);
        } else {
            expect(outputs.slice(0, -1).every(output => output.length === 0)).toBe(true);
            expect(streamInfoTotalSamples(bytes)).toBe(input.length);
        }
    });

    it("decodes to the same samples however the input was chunked", async () => {
        const decodeWith = async (seed: number) => {
            const encoder = await createAudioEncoder("flac", {inputSampleRate, streaming: true});
            return (await decodeFlac((await encodeChunks(encoder, randomChunks(input, seed, 9000))).bytes)).channelData[0];
        };
        expect(maxDifference(await decodeWith(1), await decodeWith(2))).toBe(0);
    });
});
