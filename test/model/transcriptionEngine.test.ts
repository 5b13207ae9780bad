import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OnnxTranscriptionEngine } from "../../src/capabilities/transcription/onnx/OnnxTranscriptionEngine.js";
import { AudioFileRefusedError, type TranscriptionJob, type TranscriptSegment } from "../../src/capabilities/transcription/TranscriptionEngine.js";
import type { TranscriptionSettings } from "../../src/capabilities/transcription/transcriptionManifest.js";
import type { ModelEntry } from "../../src/core/registry/ModelEntry.js";
import { WorkerPool } from "../../src/core/workers/WorkerPool.js";
import { encodeFixture, testSignal } from "../support/audioFixtures.js";
import { tinyWhisperEnglishPath, tinyWhisperPath, tinyWhisperVariantPaths } from "../support/testModels.js";

const entryFor = (path: string, settings: Partial<TranscriptionSettings> = {}): ModelEntry<TranscriptionSettings> => ({
    id: "whisper", task: "transcription", path, family: null, released: null, aliases: [], ownedBy: "test",
    contextSize: null, threads: null, parallel: null, settings: {dtype: null, temperatureFallback: true, conditionOnPreviousText: true, ...settings}
});
const entry = entryFor(tinyWhisperPath);

/** The engine on its own pool (no HTTP): windows as they are decoded, cancellation between them, refusals. */
describe("OnnxTranscriptionEngine on the tiny Whisper model", () => {
    let pool: WorkerPool;
    let engine: OnnxTranscriptionEngine;
    const job = (file: Uint8Array) => ({file: inPieces(file), task: "transcribe" as const, language: null, prompt: null, temperature: 0, logprobs: false, wordTimestamps: false});

    beforeAll(async () => {
        pool = new WorkerPool({workers: 1});
        engine = await OnnxTranscriptionEngine.load(pool, entry, {threads: 1, parallel: 1, queueSize: 2, maxAudioSeconds: 7200});
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

    it("an undecodable file is an AudioFileRefusedError, before any decoding work", async () => {
        await expect(engine.transcribe(job(new TextEncoder().encode("not audio")), {signal: new AbortController().signal}))
            .rejects.toMatchObject({constructor: AudioFileRefusedError, code: "invalid_file_format"});
    });

    it("with include logprobs, each segment's text tokens with their log-probabilities: tokens and bytes spell the text", async () => {
        const file = await encodeFixture("wav", testSignal(8, 16_000, 1), 16_000);
        const signal = new AbortController().signal;
        const plain = await engine.transcribe(job(file), {signal});
        const withLogprobs = await engine.transcribe({...job(file), logprobs: true}, {signal});
        expect(withLogprobs.segments.map(({logprobs, ...rest}) => rest)).toEqual(plain.segments);
        for (const segment of withLogprobs.segments) {
            expect(segment.logprobs!.length).toBeGreaterThan(0);
            expect(segment.logprobs!.map((entry) => entry.token).join("")).toBe(segment.text);
            expect(Buffer.from(segment.logprobs!.flatMap((entry) => entry.bytes)).toString("utf8")).toBe(segment.text);
            expect(segment.logprobs!.every((entry) => entry.logprob <= 0 && entry.logprob > -50)).toBe(true);
        }
        expect(plain.segments.every((segment) => segment.logprobs === undefined && segment.words === undefined)).toBe(true);
    });
});

/** Whisper's checks of each window (temperature fallback, silence) and word times, on models built to trigger them. */
describe("Whisper's fallback, silence and word times on built-to-purpose tiny models", () => {
    let pool: WorkerPool;
    const engines: OnnxTranscriptionEngine[] = [];
    const load = async (path: string, settings: Partial<TranscriptionSettings> = {}) => {
        const engine = await OnnxTranscriptionEngine.load(pool, entryFor(path, settings), {threads: 1, parallel: 1, queueSize: 2, maxAudioSeconds: 7200});
        engines.push(engine);
        return engine;
    };
    const signal = new AbortController().signal;
    const job = (file: Uint8Array, fields: Partial<TranscriptionJob> = {}): TranscriptionJob =>
        ({file: inPieces(file), task: "transcribe", language: "en", prompt: null, temperature: 0, logprobs: false, wordTimestamps: false, ...fields});
    let file: Uint8Array;

    beforeAll(async () => {
        pool = new WorkerPool({workers: 1});
        file = await encodeFixture("wav", testSignal(8, 16_000, 1), 16_000);
    });
    afterAll(async () => {
        for (const engine of engines)
            await engine.dispose();
        await pool.close();
    });

    it("a window whose greedy text loops is decoded again at a higher temperature, the same way each time; a temperature above 0 is kept", async () => {
        const engine = await load(tinyWhisperVariantPaths.looping);
        const result = await engine.transcribe(job(file), {signal});
        expect(result.segments.length).toBeGreaterThan(0);
        // The greedy decode ("eaaxuaxuaxu..." for 128 tokens) compresses too well: every segment comes from a sampled retry.
        expect(result.segments.every((segment) => [0.2, 0.4, 0.6, 0.8, 1].includes(segment.temperature))).toBe(true);
        // Seeded by window and attempt: the same request gives the same transcript.
        expect((await engine.transcribe(job(file), {signal})).segments).toEqual(result.segments);
        // Asked for 0.4, the window is decoded at 0.4 only, even though its text loops.
        const fixed = await engine.transcribe(job(file, {temperature: 0.4}), {signal});
        expect(fixed.segments.map((segment) => segment.temperature)).toEqual(fixed.segments.map(() => 0.4));
        expect(Math.max(...fixed.segments.map((segment) => segment.compressionRatio))).toBeGreaterThan(2.4);
        // With the manifest's temperatureFallback: false, the greedy decode stands.
        const noFallback = await (await load(tinyWhisperVariantPaths.looping, {temperatureFallback: false})).transcribe(job(file), {signal});
        expect(noFallback.segments.length).toBeGreaterThan(0);
        expect(noFallback.segments.every((segment) => segment.temperature === 0)).toBe(true);
    });

    it("a window where <|nospeech|> is likely and the text unlikely is silence: no segments", async () => {
        const engine = await load(tinyWhisperVariantPaths.silent);
        const result = await engine.transcribe(job(file), {signal});
        expect({segments: result.segments, text: result.text, seconds: result.seconds}).toEqual({segments: [], text: "", seconds: 8});
        // Asked for a temperature, the same window is still judged silent.
        expect((await engine.transcribe(job(file, {temperature: 0.6}), {signal})).segments).toEqual([]);
    });

    it("word times from the cross-attentions: the segment's words, in order, inside the segment", async () => {
        const engine = await load(tinyWhisperVariantPaths.wordy);
        expect(engine.wordTimestamps).toBe(true);
        const long = await encodeFixture("wav", testSignal(45, 16_000, 5), 16_000);
        const result = await engine.transcribe(job(long, {wordTimestamps: true}), {signal});
        const plain = await engine.transcribe(job(long), {signal});
        expect(result.segments.map(({words, ...rest}) => rest)).toEqual(plain.segments);
        const allWords = result.segments.flatMap((segment) => segment.words!);
        expect(allWords.length).toBeGreaterThan(result.segments.length);
        let previousStart = 0;
        for (const segment of result.segments) {
            expect(segment.words!.map((word) => word.word)).toEqual(segment.text.split(/\s+/u).filter((word) => word !== ""));
            for (const word of segment.words!) {
                expect(word.start).toBeGreaterThanOrEqual(Math.max(segment.start, previousStart));
                expect(word.end).toBeGreaterThanOrEqual(word.start);
                expect(word.end).toBeLessThanOrEqual(segment.end);
                previousStart = word.start;
            }
        }
        // Words past the first window are timed from the start of the file.
        expect(allWords.some((word) => word.start > 30)).toBe(true);
        // Not every word at one instant: the times come from the audio.
        expect(new Set(allWords.map((word) => word.start)).size).toBeGreaterThan(2);
    });

    it("each window is prompted with the text before it (conditionOnPreviousText), unless the manifest says not to", async () => {
        const long = await encodeFixture("wav", testSignal(70, 16_000, 9), 16_000);
        const conditioned = await (await load(tinyWhisperPath)).transcribe(job(long), {signal});
        const alone = await (await load(tinyWhisperPath, {conditionOnPreviousText: false})).transcribe(job(long), {signal});
        const firstWindow = (segments: TranscriptSegment[]) => segments.filter((segment) => segment.seek === 0);
        // The first window has nothing before it: the same either way; later windows see different prompts.
        expect(firstWindow(conditioned.segments).length).toBeGreaterThan(0);
        expect(firstWindow(conditioned.segments)).toEqual(firstWindow(alone.segments));
        const later = (segments: TranscriptSegment[]) => segments.filter((segment) => segment.seek > 0).map((segment) => segment.text);
        expect(later(conditioned.segments).length).toBeGreaterThan(0);
        expect(later(conditioned.segments)).not.toEqual(later(alone.segments));
    });

    it("a model exported without cross-attentions says it cannot time words", async () => {
        const engine = await load(tinyWhisperEnglishPath);
        expect(engine.wordTimestamps).toBe(false);
    });
});

/** A file as an upload arrives: in three pieces, each in a buffer of its own (moved to the worker, joined there). */
function inPieces(file: Uint8Array): Uint8Array[] {
    const third = Math.ceil(file.length / 3);
    return [0, 1, 2].map((index) => file.slice(index * third, (index + 1) * third));
}
