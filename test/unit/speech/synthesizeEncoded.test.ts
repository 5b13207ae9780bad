import { describe, expect, it } from "vitest";
import type { AudioEncoder } from "../../../src/media/audio/AudioEncoder.js";
import { AsyncQueue } from "../../../src/core/streaming/AsyncQueue.js";
import { synthesizeEncoded } from "../../../src/capabilities/speech/synthesizeEncoded.js";
import { FakeSpeechEngine } from "../../support/FakeSpeechEngine.js";

const plan = (input: string, stretch = 1) => ({
    job: {input, voice: "af_heart", speed: 1}, format: "pcm" as const, streamFormat: "audio" as const, streamed: true, stretch
});

/** Records calls; each push answers one byte per sample, end answers [255]; push number `failAt` throws. */
function recordingEncoder(failAt?: number) {
    const calls = {pushes: 0, ends: 0};
    const encoder: AudioEncoder = {
        contentType: "audio/test", sampleRate: 24_000,
        async push(samples) {
            if (++calls.pushes === failAt)
                throw new Error("codec broke");
            return new Uint8Array(samples.length);
        },
        async end() {
            calls.ends++;
            return Uint8Array.of(255);
        }
    };
    return {encoder, calls};
}

async function drain(queue: AsyncQueue<Uint8Array>) {
    const items: Uint8Array[] = [];
    for (let item; (item = await queue.next()) != null;)
        items.push(item);
    return items;
}

describe("synthesizeEncoded", () => {
    it("queues each sentence's encoded slices (at most 0.25 s each), in order, then the encoder's end, and counts the returned samples", async () => {
        const engine = new FakeSpeechEngine("e", {sampleRate: 24_000, hasSpeedInput: true});
        const {encoder, calls} = recordingEncoder();
        const speech = synthesizeEncoded(engine, plan("One. Two two. Three three three."), encoder, new AbortController().signal);
        const items = await drain(speech.chunks);
        const slice = 6000;
        const expected = engine.produced[0].flatMap((sentence) =>
            Array.from({length: Math.ceil(sentence.length / slice)}, (_, index) => Math.min(slice, sentence.length - index * slice)));
        expect(expected.length).toBeGreaterThan(3);
        expect(items.map((item) => item.length)).toEqual([...expected, 1]);
        expect(await speech.done).toEqual({inputTokens: 32, audioSamples: engine.produced[0].reduce((sum, sentence) => sum + sentence.length, 0)});
        await speech.release();
        expect(calls).toEqual({pushes: expected.length, ends: 1});
    });

    it("time-stretches each sentence when asked (speed without a speed input)", async () => {
        const engine = new FakeSpeechEngine("e", {sampleRate: 16_000, hasSpeedInput: false});
        const {encoder} = recordingEncoder();
        const speech = synthesizeEncoded(engine, plan("One. Two two.", 2), encoder, new AbortController().signal);
        const items = await drain(speech.chunks);
        expect(items.slice(0, 2).map((item) => item.length)).toEqual(engine.produced[0].map((sentence) => Math.round(sentence.length / 2)));
        await speech.release();
    });

    it("an encoder failure stops the engine at the next sentence and surfaces as itself; end() is still called once", async () => {
        const engine = new FakeSpeechEngine("e", {sampleRate: 24_000, hasSpeedInput: true});
        const gate = engine.holdBefore(2);
        const {encoder, calls} = recordingEncoder(2);
        const speech = synthesizeEncoded(engine, plan("One. Two. Three. Four."), encoder, new AbortController().signal);
        await gate.reached;
        await expect(drain(speech.chunks)).rejects.toThrow("codec broke");
        await expect(speech.done).rejects.toThrow("codec broke");
        expect(engine.aborts).toHaveLength(1);
        expect(engine.produced[0]).toHaveLength(2);
        await speech.release();
        expect(calls.ends).toBe(1);
        expect(engine.load().busy).toBe(0);
    });

    it("release() while the engine waits aborts it and frees the encoder; the request's abort does the same", async () => {
        for (const by of ["release", "request"] as const) {
            const engine = new FakeSpeechEngine("e", {sampleRate: 24_000, hasSpeedInput: true});
            const gate = engine.holdBefore(1);
            const {encoder, calls} = recordingEncoder();
            const request = new AbortController();
            const speech = synthesizeEncoded(engine, plan("One. Two."), encoder, request.signal);
            expect((await speech.chunks.next())!.length).toBeGreaterThan(0);
            await gate.reached;
            if (by === "request")
                request.abort(new Error("client gone"));
            await speech.release();
            expect(engine.aborts).toHaveLength(1);
            expect(calls.ends).toBe(1);
            expect(engine.load().busy).toBe(0);
            if (by === "request")
                await expect(speech.done).rejects.toThrow("client gone");
        }
    });
});
