import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { concatBytes } from "../../../../src/media/audio/concatBytes.js";
import { createAudioEncoder } from "../../../../src/media/audio/createAudioEncoder.js";
import { AudioTooLongError, SampleRateError, UndecodableAudioError } from "../../../../src/media/audio/decode/audioRefusals.js";
import { MonoCollector } from "../../../../src/media/audio/decode/MonoCollector.js";
import { mp3DeclaredSeconds } from "../../../../src/media/audio/decode/mp3DeclaredSeconds.js";
import { openFlac } from "../../../../src/media/audio/decode/openFlac.js";
import { decodeAudio } from "../../../../src/media/audio/decodeAudio.js";
import { flacSilence, wavAtRate } from "../../../support/audioBombs.js";
import { encodeFixture, remuxOggToWebm, testSignal } from "../../../support/audioFixtures.js";

const vorbisFixture = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../fixtures/audio/signal-3s-22k.ogg");

/** decodeAudio with a limit, counting the checkpoints it passed (0: refused before decoding anything). */
async function decodeCounting(bytes: Uint8Array, maxSeconds: number) {
    let checkpoints = 0;
    const decoding = decodeAudio(bytes, 16_000, {maxSeconds, checkpoint: () => void checkpoints++});
    const outcome = await decoding.then((decoded) => decoded, (error: Error) => error);
    return {outcome, checkpoints};
}

/** FLAC as the server streams it: STREAMINFO written first, its total left 0 ("unknown"). */
async function streamedFlac(samples: Float32Array, rate: number): Promise<Uint8Array> {
    const encoder = await createAudioEncoder("flac", {inputSampleRate: rate, streaming: true});
    return concatBytes([await encoder.push(samples), await encoder.end()]);
}

/** An MPEG-2 Layer III frame (24 kHz mono, 64 kbps, 192 bytes) holding a Xing header that declares `frames` frames. */
function xingFrame(frames: number): Uint8Array {
    const frame = new Uint8Array(192);
    frame.set([0xFF, 0xF3, 0x84, 0xC0]);
    const view = new DataView(frame.buffer);
    // After the 4-byte header and 9 bytes of mono MPEG-2 side information.
    frame.set(new TextEncoder().encode("Xing"), 13);
    view.setUint32(17, 1);
    view.setUint32(21, frames);
    return frame;
}

describe("decodeAudio's bounds: sample rate, length, cancellation", () => {
    it("refuses a rate outside 8-384 kHz before decoding, naming it; 8 and 384 kHz are read", async () => {
        for (const rate of [1, 7_999, 384_001]) {
            const {outcome, checkpoints} = await decodeCounting(wavAtRate(rate), 7200);
            expect(outcome).toBeInstanceOf(SampleRateError);
            expect((outcome as Error).message).toContain(`${rate} Hz`);
            expect(checkpoints).toBe(0);
        }
        for (const rate of [8_000, 384_000])
            expect((await decodeAudio(wavAtRate(rate, rate / 10), 16_000, {maxSeconds: 1})).samples.length).toBe(1_600);
        // 1 Hz is the 1,044-byte file that claimed 1,000 s.
        expect(wavAtRate(1).length).toBe(1_044);
    });

    it("a length the header declares past the limit is refused before any decoding, for each container that declares one", async () => {
        const signal = testSignal(4, 24_000);
        const ogg = await encodeFixture("opus", signal, 24_000);
        const declaring: [string, Uint8Array][] = [
            ["wav", await encodeFixture("wav", signal, 24_000)],
            ["flac", await encodeFixture("flac", signal, 24_000)],
            // Its STREAMINFO says "unknown": its last frame headers tell the length (flacFramesTotal).
            ["streamed flac", await streamedFlac(signal, 24_000)],
            ["mp3 with a Xing header", new Uint8Array([...xingFrame(10_000), ...await encodeFixture("mp3", signal, 24_000)])],
            ["ogg opus", ogg],
            ["ogg vorbis", fs.readFileSync(vorbisFixture)],
            ["webm opus", await remuxOggToWebm(ogg)],
            // 600 s of silence repeated to 1.4 MB: 8.3 hours, and its STREAMINFO says so.
            ["a FLAC bomb", await flacSilence(600, {scaleTo: 1_400_000})]
        ];
        for (const [name, bytes] of declaring) {
            const {outcome, checkpoints} = await decodeCounting(bytes, 2);
            expect(outcome, name).toBeInstanceOf(AudioTooLongError);
            expect((outcome as Error).message, name).toMatch(/^The audio is [\d.]+ s long, longer than the limit of 2 s\.$/u);
            expect(checkpoints, name).toBe(0);
        }
        expect(mp3DeclaredSeconds(xingFrame(10_000))).toBe(240);
    });

    it("a length no header declares is refused as soon as the decoded audio passes the limit", async () => {
        const signal = testSignal(4, 24_000);
        const undeclared: [string, Uint8Array][] = [
            // lamejs writes no Xing header; MediaRecorder's WebM has no Duration.
            ["mp3", await encodeFixture("mp3", signal, 24_000)],
            ["webm without a duration", await remuxOggToWebm(await encodeFixture("opus", signal, 24_000), {appendOnly: true})]
        ];
        for (const [name, bytes] of undeclared) {
            const {outcome, checkpoints} = await decodeCounting(bytes, 2);
            expect(outcome, name).toBeInstanceOf(AudioTooLongError);
            expect((outcome as Error).message, name).toBe("The audio is longer than the limit of 2 s.");
            expect(checkpoints, name).toBeGreaterThan(0);
            // Under a limit it would fit, the same file is read whole.
            expect((await decodeAudio(bytes, 16_000, {maxSeconds: 10})).samples.length / 16_000, name).toBeGreaterThan(3.9);
        }
    });

    it("a FLAC bomb whose STREAMINFO hides its length: its last frames tell it (refused before decoding), and it is held to them, in pieces of bounded size", async () => {
        // 600 s of silence repeated to 1.4 MB with STREAMINFO's total left 0: 8.3 hours, each copy's frames numbered
        // from 0 again, so the last frames say 600 s.
        const bomb = await flacSilence(600, {scaleTo: 1_400_000, total: "unknown"});
        expect(openFlac(bomb).seconds).toBeCloseTo(600, 0);
        expect(openFlac(await streamedFlac(testSignal(4, 24_000), 24_000)).seconds).toBe(4);
        const early = await decodeCounting(bomb, 60);
        expect(early.outcome).toBeInstanceOf(AudioTooLongError);
        expect(early.checkpoints).toBe(0);
        // Under a limit the frames' 600 s fit: decoded until past them (600 s at 16 kHz: a few 2 M-sample pieces), then refused as damaged.
        const held = await decodeCounting(bomb, 7200);
        expect(held.outcome).toBeInstanceOf(UndecodableAudioError);
        expect((held.outcome as Error).message).toMatch(/more audio than its frames declare \(9601024 samples at 16000 Hz\)/u);
        expect(held.checkpoints).toBeLessThanOrEqual(8);
        let pieces = 0;
        const reading = (async () => {
            for await (const chunk of openFlac(bomb).chunks) {
                expect(chunk.channels[0].length * chunk.channels.length).toBeLessThanOrEqual(2 ** 22);
                pieces++;
            }
        })();
        await expect(reading).rejects.toThrow(UndecodableAudioError);
        expect(pieces).toBeGreaterThan(1);
    });

    it("a FLAC file whose frames hold more than its STREAMINFO declares is refused as damaged", async () => {
        // The 600 s file's frames repeated three times, its header still saying 600 s.
        const lying = await flacSilence(600, {scaleTo: 3 * 29_000, total: "original"});
        const {outcome} = await decodeCounting(lying, 7200);
        expect(outcome).toBeInstanceOf(UndecodableAudioError);
        expect((outcome as Error).message).toMatch(/more audio than its header declares/u);
        expect((await decodeAudio(await flacSilence(600), 16_000, {maxSeconds: 7200})).samples.length / 16_000).toBeCloseTo(600, 0);
    });

    it("the checkpoint runs between pieces: what it throws stops the decoding and comes out as it is", async () => {
        const cancelled = new Error("cancelled");
        let calls = 0;
        const decoding = decodeAudio(await flacSilence(600, {total: "unknown"}), 16_000, {maxSeconds: 7200, checkpoint: () => {
            if (++calls === 2)
                throw cancelled;
        }});
        await expect(decoding).rejects.toBe(cancelled);
        expect(calls).toBe(2);
    });
});

describe("MonoCollector", () => {
    const second = (value: number, rate = 16_000, channels = 1) => ({channels: Array.from({length: channels}, () => new Float32Array(rate).fill(value)), sampleRate: rate});

    it("refuses the piece that would pass the limit, keeping only what came before it", () => {
        const collector = new MonoCollector("wav", 16_000, 2.5);
        collector.push(second(0.1));
        collector.push(second(0.2));
        expect(() => collector.push(second(0.3))).toThrow(AudioTooLongError);
        expect(collector.clock.seconds).toBe(2);
        const samples = collector.finish();
        expect(samples.length).toBe(32_000);
        expect([samples[0], samples[31_999]]).toEqual([Math.fround(0.1), Math.fround(0.2)]);
    });

    it("mixes channels, resamples each run of one rate, and counts seconds across a change of rate", () => {
        const collector = new MonoCollector("mp3", 16_000, 10);
        collector.push(second(0.5, 48_000, 2));
        collector.push(second(0.5, 8_000));
        expect(collector.clock.seconds).toBe(2);
        expect(collector.clock.source).toEqual({sampleRate: 48_000, channels: 2});
        expect(collector.finish().length).toBe(32_000);
        expect(() => new MonoCollector("wav", 16_000, 10).push(second(0, 4_000))).toThrow(SampleRateError);
    });
});
