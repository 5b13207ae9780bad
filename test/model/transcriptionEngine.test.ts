import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OnnxTranscriptionEngine } from "../../src/capabilities/transcription/onnx/OnnxTranscriptionEngine.js";
import { UndecodableFileError, type TranscriptSegment } from "../../src/capabilities/transcription/TranscriptionEngine.js";
import type { TranscriptionSettings } from "../../src/capabilities/transcription/transcriptionManifest.js";
import type { ModelEntry } from "../../src/core/registry/ModelEntry.js";
import { WorkerPool } from "../../src/core/workers/WorkerPool.js";
import { encodeFixture, testSignal } from "../support/audioFixtures.js";
import { tinyWhisperPath } from "../support/testModels.js";

const entry: ModelEntry<TranscriptionSettings> = {
    id: "whisper", task: "transcription", path: tinyWhisperPath, family: null, released: null, aliases: [], ownedBy: "test",
    contextSize: null, threads: null, parallel: null, settings: {dtype: null}
};

/** The engine on its own pool (no HTTP): windows as they are decoded, cancellation between them, refusals. */
describe("OnnxTranscriptionEngine on the tiny Whisper model", () => {
    let pool: WorkerPool;
    let engine: OnnxTranscriptionEngine;
    const job = (file: Uint8Array) => ({file, task: "transcribe" as const, language: null, prompt: null, temperature: 0});

    beforeAll(async () => {
        pool = new WorkerPool({workers: 1});
        engine = await OnnxTranscriptionEngine.load(pool, entry, {threads: 1, parallel: 1, queueSize: 2});
    });
    afterAll(async () => {
        await engine.dispose();
        await pool.close();
    });

    it("without a language, Whisper's detection picks one of the model's languages and transcribes in it", async () => {
        const signal = new AbortController().signal;
        const file = await encodeFixture("wav", testSignal(8, 16_000, 1), 16_000);
        const detected = await engine.transcribe(job(file), {signal});
        expect(engine.languages).toContain(detected.language);
        // The same as asking for that language; asking for another one is decoded with its own token.
        const asked = await engine.transcribe({...job(file), language: detected.language}, {signal});
        expect({language: asked.language, segments: asked.segments}).toEqual({language: detected.language, segments: detected.segments});
        const other = engine.languages.find((language) => language !== detected.language)!;
        expect((await engine.transcribe({...job(file), language: other}, {signal})).language).toBe(other);
    });

    it("hands each window's segments over in order as it is done, and they make up the result", async () => {
        const file = await encodeFixture("wav", testSignal(95, 16_000, 2), 16_000);
        const windows: {segments: TranscriptSegment[], processed: number, total: number}[] = [];
        const result = await engine.transcribe(job(file), {
            signal: new AbortController().signal,
            onSegments: (segments, processed, total) => windows.push({segments, processed, total})
        });
        expect(windows.length).toBeGreaterThanOrEqual(4);
        expect(windows.map((window) => window.total)).toEqual(windows.map(() => 95));
        const processed = windows.map((window) => window.processed);
        expect(processed).toEqual([...processed].sort((a, b) => a - b));
        expect(processed.at(-1)).toBe(95);
        expect(windows.flatMap((window) => window.segments)).toEqual(result.segments);
        expect(result.seconds).toBe(95);
    });

    it("stops between windows when the signal aborts, rejecting with its reason", async () => {
        const file = await encodeFixture("wav", testSignal(300, 16_000, 3), 16_000);
        const abort = new AbortController();
        let windows = 0;
        const reason = new Error("client went away");
        const run = engine.transcribe(job(file), {
            signal: abort.signal,
            onSegments: () => {
                windows++;
                abort.abort(reason);
            }
        });
        await expect(run).rejects.toBe(reason);
        // Ten windows in all; the worker saw the flag at its next decoder step.
        expect(windows).toBeLessThan(10);
        // The engine is free: the next request runs.
        expect((await engine.transcribe(job(await encodeFixture("wav", testSignal(2, 16_000), 16_000)), {signal: new AbortController().signal})).seconds).toBe(2);
    });

    it("an undecodable file is an UndecodableFileError, before any decoding work", async () => {
        await expect(engine.transcribe(job(new TextEncoder().encode("not audio")), {signal: new AbortController().signal})).rejects.toBeInstanceOf(UndecodableFileError);
    });
});
