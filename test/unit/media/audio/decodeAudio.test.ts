import { describe, expect, it } from "vitest";
import { UndecodableAudioError } from "../../../../src/media/audio/decode/audioRefusals.js";
import { decodeAudio } from "../../../../src/media/audio/decodeAudio.js";

/** A RIFF/WAVE file with one fmt chunk (optionally WAVE_FORMAT_EXTENSIBLE) and the given sample bytes. */
function wavFile(format: {code: number, channels: number, rate: number, bits: number, extensible?: boolean}, data: Uint8Array): Uint8Array {
    const fmtSize = format.extensible ? 40 : 16;
    const bytes = new Uint8Array(20 + fmtSize + 8 + data.length);
    const view = new DataView(bytes.buffer);
    const text = (offset: number, value: string) => bytes.set(new TextEncoder().encode(value), offset);
    text(0, "RIFF");
    view.setUint32(4, bytes.length - 8, true);
    text(8, "WAVEfmt ");
    view.setUint32(16, fmtSize, true);
    view.setUint16(20, format.extensible ? 0xFFFE : format.code, true);
    view.setUint16(22, format.channels, true);
    view.setUint32(24, format.rate, true);
    view.setUint32(28, format.rate * format.channels * format.bits / 8, true);
    view.setUint16(32, format.channels * format.bits / 8, true);
    view.setUint16(34, format.bits, true);
    if (format.extensible) {
        view.setUint16(36, 22, true);
        view.setUint16(38, format.bits, true);
        view.setUint16(44, format.code, true);
    }
    text(20 + fmtSize, "data");
    view.setUint32(24 + fmtSize, data.length, true);
    bytes.set(data, 28 + fmtSize);
    return bytes;
}

const limits = {maxSeconds: 60};

describe("decodeAudio (uploads to mono samples)", () => {
    it("reads 8, 16, 24 and 32-bit PCM and 32-bit float WAV exactly (no resampling at the file's own rate)", async () => {
        const cases: [number, number, number[], number[]][] = [
            [1, 8, [0, 128, 192], [-1, 0, 0.5]],
            [1, 16, [0x00, 0x80, 0x00, 0x40], [-1, 0.5]],
            [1, 24, [0x00, 0x00, 0x80, 0x00, 0x00, 0xC0], [-1, -0.5]],
            [1, 32, [0, 0, 0, 0x80, 0, 0, 0, 0x40], [-1, 0.5]],
            [3, 32, [...new Uint8Array(Float32Array.of(0.25, -0.75).buffer)], [0.25, -0.75]]
        ];
        for (const [code, bits, data, expected] of cases)
            for (const extensible of [false, true]) {
                const decoded = await decodeAudio(wavFile({code, channels: 1, rate: 16_000, bits, extensible}, Uint8Array.from(data)), 16_000, limits);
                expect([...decoded.samples], `${code}/${bits}/${extensible}`).toEqual(expected);
                expect(decoded.format).toBe("wav");
            }
    });

    it("averages channels and resamples to the rate asked for", async () => {
        const frames = 8_000;
        const data = new Int16Array(frames * 2);
        for (let i = 0; i < frames; i++) {
            data[2 * i] = 0x2000;
            data[2 * i + 1] = 0x6000;
        }
        const decoded = await decodeAudio(wavFile({code: 1, channels: 2, rate: 8_000, bits: 16}, new Uint8Array(data.buffer)), 16_000, limits);
        expect(decoded).toMatchObject({sourceChannels: 2, sourceSampleRate: 8_000, sampleRate: 16_000});
        expect(decoded.samples.length).toBe(16_000);
        expect(decoded.samples[8_000]).toBeCloseTo(0.5, 3);
    });

    it("refuses what it cannot read with UndecodableAudioError and a reason", async () => {
        const refuse = (bytes: Uint8Array) => expect(decodeAudio(bytes, 16_000, limits)).rejects.toBeInstanceOf(UndecodableAudioError);
        await refuse(new TextEncoder().encode("hello, not audio"));
        await refuse(wavFile({code: 2, channels: 1, rate: 16_000, bits: 4}, new Uint8Array(8)));
        await refuse(wavFile({code: 1, channels: 1, rate: 16_000, bits: 16}, new Uint8Array(0)));
        await refuse(new Uint8Array([0, 0, 0, 24, ...new TextEncoder().encode("ftypM4A "), 0, 0]));
        await refuse(new Uint8Array([0x1A, 0x45, 0xDF, 0xA3, 0, 0]));
        await refuse(new Uint8Array([...new TextEncoder().encode("OggS"), ...new Uint8Array(24), ...new TextEncoder().encode("\u0001vorbis")]));
        await refuse(new Uint8Array([...new TextEncoder().encode("OggS"), ...new Uint8Array(24), ...new TextEncoder().encode("Speex   ")]));
        await expect(decodeAudio(new TextEncoder().encode("RIFF\0\0\0\0WAVEjunk"), 16_000, limits)).rejects.toThrow(/no data chunk/u);
    });
});
