import { describe, expect, it } from "vitest";
import { concatBytes } from "../../src/media/audio/concatBytes.js";
import { createAudioEncoder } from "../../src/media/audio/createAudioEncoder.js";
import { createOffThreadAudioEncoder } from "../../src/media/audio/OffThreadAudioEncoder.js";

// The encoder thread gives the bytes the same codec gives on the main thread, push by push, and leaves the caller's
// samples as they were (it encodes a copy). Several sessions interleave without mixing.
const rate = 24_000;
const tone = (frequency: number, seconds: number) => Float32Array.from({length: Math.round(rate * seconds)}, (_, i) => 0.4 * Math.sin(2 * Math.PI * frequency * i / rate));

async function encodeAll(encoder: {push(samples: Float32Array): Promise<Uint8Array>, end(): Promise<Uint8Array>}, pieces: Float32Array[]) {
    const out: Uint8Array[] = [];
    for (const piece of pieces)
        out.push(await encoder.push(piece));
    out.push(await encoder.end());
    return concatBytes(out);
}

describe("the audio encoder thread", () => {
    it.each(["mp3", "flac", "opus", "wav"] as const)("%s: the same bytes as on the main thread; the caller's samples untouched", async (format) => {
        const pieces = [tone(220, 0.4), tone(330, 0.3), tone(440, 0.5)];
        const copies = pieces.map((piece) => piece.slice());
        const options = {inputSampleRate: rate, streaming: true};
        const [here, there] = await Promise.all([
            encodeAll(await createAudioEncoder(format, options), pieces),
            createOffThreadAudioEncoder(format, options).then((encoder) => encodeAll(encoder, pieces))
        ]);
        expect(there.length).toBeGreaterThan(100);
        if (format === "opus") {
            // Each Ogg stream has a random serial number (and so its own page checksums): the same length and framing.
            expect(there.length).toBe(here.length);
            expect(Buffer.from(there).subarray(0, 4).toString()).toBe("OggS");
        } else
            expect(Buffer.from(there).equals(Buffer.from(here))).toBe(true);
        expect(pieces).toEqual(copies);
    });

    it("keeps concurrent sessions apart", async () => {
        const options = {inputSampleRate: rate, streaming: true};
        const a = [tone(200, 0.5), tone(250, 0.5)];
        const b = [tone(600, 0.5), tone(650, 0.5)];
        const [alone, together] = await Promise.all([
            Promise.all([createAudioEncoder("mp3", options).then((e) => encodeAll(e, a)), createAudioEncoder("mp3", options).then((e) => encodeAll(e, b))]),
            Promise.all([createOffThreadAudioEncoder("mp3", options).then((e) => encodeAll(e, a)), createOffThreadAudioEncoder("mp3", options).then((e) => encodeAll(e, b))])
        ]);
        expect(Buffer.from(together[0]).equals(Buffer.from(alone[0]))).toBe(true);
        expect(Buffer.from(together[1]).equals(Buffer.from(alone[1]))).toBe(true);
    });

    it("an unknown session or a bad rate is an error, not a hang", async () => {
        await expect(createOffThreadAudioEncoder("mp3", {inputSampleRate: -1, streaming: true})).rejects.toThrow("inputSampleRate");
    });
});
