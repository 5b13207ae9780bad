import { UnknownVoiceError } from "../../src/capabilities/speech/errors/UnknownVoiceError.js";
import { speechCapability } from "../../src/capabilities/speech/speechCapability.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QueueFullError } from "../../src/core/engines/QueueFullError.js";
import { ApiError } from "../../src/core/http/ApiError.js";
import type { ModelEntry } from "../../src/core/registry/ModelEntry.js";
import { WorkerPool } from "../../src/core/workers/WorkerPool.js";
import { OnnxSpeechEngine } from "../../src/capabilities/speech/onnx/OnnxSpeechEngine.js";
import { phonemizeEnglish } from "../../src/capabilities/speech/onnx/phonemizeEnglish.js";
import { speechModelSpec } from "../../src/capabilities/speech/onnx/speechModelSpec.js";
import type { SynthesizeTask } from "../../src/capabilities/speech/onnx/speechWorkerProtocol.js";
import { speechTaskHandles } from "../../src/capabilities/speech/onnx/speechTaskHandles.js";
import type { SpeechSettings } from "../../src/capabilities/speech/speechManifest.js";
import type { SpeechJob } from "../../src/capabilities/speech/SpeechEngine.js";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { makeTestKokoroOnnx } from "../support/onnx/makeTestKokoroOnnx.js";
import { tinyKokoroPath, tinyVitsPath } from "../support/testModels.js";

/** The test Kokoro graph's samples per token (pads included) at speed 1; the test VITS graph's per token (blanks included). */
const kokoroFrame = 600;
const vitsFrame = 256;

function entry(path: string, settings: Partial<SpeechSettings> = {}, id = "tts"): ModelEntry<SpeechSettings> {
    return {
        id, task: "speech", path, family: null, released: null, aliases: [], ownedBy: "local", contextSize: null, threads: null, parallel: null,
        settings: {dtype: null, defaultVoice: null, voices: {}, ...settings}
    };
}

async function collect(engine: OnnxSpeechEngine, job: Partial<SpeechJob> & {input: string}) {
    const chunks: Float32Array[] = [];
    const result = await engine.synthesize({voice: engine.defaultVoice, speed: 1, ...job}, {
        signal: new AbortController().signal, onAudio: (samples) => chunks.push(samples)
    });
    return {chunks, result, total: chunks.reduce((sum, chunk) => sum + chunk.length, 0)};
}

function expectAudio(samples: Float32Array, bound: number) {
    expect(samples.length).toBeGreaterThan(0);
    expect(samples.every((value) => Number.isFinite(value) && Math.abs(value) <= bound)).toBe(true);
    // Sentences join at zero (5 ms raised-cosine fade at both ends) and are not silent in between.
    expect(Math.abs(samples[0])).toBe(0);
    expect(Math.abs(samples[samples.length - 1])).toBe(0);
    expect(samples.some((value) => Math.abs(value) > 0.05)).toBe(true);
}

let pool: WorkerPool;
let kokoro: OnnxSpeechEngine;
let vits: OnnxSpeechEngine;

beforeAll(async () => {
    pool = new WorkerPool({workers: 2});
    kokoro = await OnnxSpeechEngine.load(pool, entry(tinyKokoroPath, {}, "kokoro"), {threads: 1, parallel: 2, queueSize: 4});
    vits = await OnnxSpeechEngine.load(pool, entry(tinyVitsPath, {}, "vits"), {threads: 1, parallel: 2, queueSize: 4});
});

afterAll(async () => {
    await kokoro?.dispose();
    await vits?.dispose();
    await pool?.close();
});

describe("Kokoro engine", () => {
    it("describes the folder: 24 kHz, the English voices in voices/, af_heart by default, OpenAI aliases only for voices present", () => {
        expect(kokoro.sampleRate).toBe(24_000);
        expect(kokoro.voices).toEqual(["af_alloy", "af_heart", "am_echo", "bm_fable"]);
        expect(kokoro.defaultVoice).toBe("af_heart");
        expect(kokoro.hasSpeedInput).toBe(true);
        expect(kokoro.voiceAliases).toEqual({alloy: "af_alloy", echo: "am_echo", fable: "bm_fable", marin: "af_heart"});
        expect(kokoro.describe()).toMatchObject({modelType: "kokoro", sampleRate: 24_000, voices: 4, defaultVoice: "af_heart"});
    });

    it("phonemizes a known word with espeak-ng into the ids of Kokoro's vocabulary, padded with 0 at both ends", async () => {
        expect(await phonemizeEnglish(["Hello"], false)).toEqual(["h\u0259l\u02C8o\u028A"]);
        expect(await phonemizeEnglish(["Hello"], true)).toEqual(["h\u0259l\u02C8\u0259\u028A"]);
        // Punctuation kept between the clauses espeak phonemizes (in one call), numbers read as words.
        // Several sentences in one espeak call come back as when phonemized one by one.
        const sentences = ["Hello, world; it's 3 o'clock, really?", "Dr. Smith (the vet) paid $3.50.", "Yes!"];
        const together = await phonemizeEnglish(sentences, false);
        expect(together).toEqual([
            ...await phonemizeEnglish([sentences[0]], false), ...await phonemizeEnglish([sentences[1]], false), ...await phonemizeEnglish([sentences[2]], false)
        ]);
        expect(together[0]).toBe("h\u0259l\u02C8o\u028A, w\u02C8\u025C\u02D0ld; \u026Ats \u03B8\u0279\u02C8i\u02D0 \u0259kl\u02C8\u0251\u02D0k, \u0279\u02C8i\u0259li?");
        expect(together[1]).toMatch(/^d\u02C8\u0251\u02D0kt\u025A sm\u02C8\u026A\u03B8 \(.+\) p\u02C8e\u026Ad .+ s\u02C8\u025Bnts\.$/u);
        // h ə l ˈ o ʊ = ids 50 83 54 156 57 135, plus "$" (0) at both ends: 8 tokens of 600 samples in the test graph.
        const {chunks, result} = await collect(kokoro, {input: "Hello"});
        expect(result).toEqual({inputTokens: 6, outputSamples: 8 * kokoroFrame});
        expect(chunks.map((chunk) => chunk.length)).toEqual([8 * kokoroFrame]);
    });

    it("synthesizes sentence by sentence, in order, each chunk the same as that sentence alone", async () => {
        const sentences = ["The quick brown fox jumps over the lazy dog.", "Dr. Smith paid $3.50!", "Is it 3:05 already?"];
        const {chunks, result, total} = await collect(kokoro, {input: sentences.join(" ")});
        expect(chunks).toHaveLength(3);
        chunks.forEach((chunk) => expectAudio(chunk, 0.5));
        expect(result.outputSamples).toBe(total);
        let tokens = 0;
        for (const [index, sentence] of sentences.entries()) {
            const alone = await collect(kokoro, {input: sentence});
            expect(alone.chunks).toHaveLength(1);
            expect(chunks[index]).toEqual(alone.chunks[0]);
            tokens += alone.result.inputTokens;
        }
        expect(result.inputTokens).toBe(tokens);
    });

    it("gives longer audio for longer text, different audio per voice, and about half the samples at speed 2", async () => {
        const short = await collect(kokoro, {input: "Hi."});
        const long = await collect(kokoro, {input: "Hi there, this is a much longer sentence than the first one."});
        expect(long.total).toBeGreaterThan(3 * short.total);
        const echo = await collect(kokoro, {input: "Hi.", voice: "am_echo"});
        expect(echo.total).toBe(short.total);
        expect(echo.chunks[0]).not.toEqual(short.chunks[0]);
        const fast = await collect(kokoro, {input: "Hi there, this is a much longer sentence than the first one.", speed: 2});
        expect(fast.total / long.total).toBeCloseTo(0.5, 2);
    });

    it("rejects an unknown voice, which the capability's mapping makes a 400 naming `voice` and listing the valid ones", async () => {
        const error = await kokoro.synthesize({input: "Hi.", voice: "nova", speed: 1}, {signal: new AbortController().signal, onAudio: () => {}})
            .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(UnknownVoiceError);
        expect(speechCapability.toApiError!(error)).toMatchObject({status: 400, param: "voice"});
        expect((error as Error).message).toContain("af_heart, am_echo, bm_fable, alloy");
    });

    it("cuts a sentence whose phonemes exceed 510 tokens into forward passes that fit, still one chunk", async () => {
        // 240 characters (one piece for splitSentences) that espeak reads as about 1,300 phonemes.
        const input = Array.from({length: 30}, () => "7777777").join(" ");
        const {chunks, result} = await collect(kokoro, {input});
        expect(chunks).toHaveLength(1);
        expect(result.inputTokens).toBeGreaterThan(2 * 510);
        // Each pass gives (its tokens + 2 pads) x 600 samples, so the pads tell how many passes ran.
        const passes = (result.outputSamples / kokoroFrame - result.inputTokens) / 2;
        expect(Number.isInteger(passes)).toBe(true);
        expect(passes).toBeGreaterThanOrEqual(Math.ceil(result.inputTokens / 510));
        expect(passes).toBeLessThanOrEqual(2 * Math.ceil(result.inputTokens / 510));
    });
});

describe("VITS engine", () => {
    it("describes a one-speaker 16 kHz model without speed input, every OpenAI name answering to 'default'", () => {
        expect(vits.sampleRate).toBe(16_000);
        expect(vits.voices).toEqual(["default"]);
        expect(vits.defaultVoice).toBe("default");
        expect(vits.hasSpeedInput).toBe(false);
        expect(Object.keys(vits.voiceAliases)).toHaveLength(13);
        expect(new Set(Object.values(vits.voiceAliases))).toEqual(new Set(["default"]));
    });

    it("synthesizes sentence by sentence from characters (blanks between them), lengths growing with the text", async () => {
        const {chunks, result} = await collect(vits, {input: "Hi. Bob is here!"});
        // "hi" -> _h_i_ (5 tokens); "bob is here" -> 11 characters, 23 tokens. Punctuation is not in the vocabulary.
        expect(chunks.map((chunk) => chunk.length)).toEqual([5 * vitsFrame, 23 * vitsFrame]);
        chunks.forEach((chunk) => expectAudio(chunk, 0.5));
        expect(result).toEqual({inputTokens: 2 + 11, outputSamples: 28 * vitsFrame});
        // No speed input: the engine synthesizes at 1 (the API layer time-stretches).
        const fast = await collect(vits, {input: "Hi. Bob is here!", speed: 2});
        expect(fast.total).toBe(28 * vitsFrame);
    });
});

describe("cancellation, queue and manifest", () => {
    it("a signal aborted in the first onAudio rejects with its reason, hands out no more audio and leaves the pool free", async () => {
        const single = new WorkerPool({workers: 1});
        const engine = await OnnxSpeechEngine.load(single, entry(tinyKokoroPath), {threads: 1, parallel: 1, queueSize: 1});
        try {
            const controller = new AbortController();
            const reason = new Error("client went away");
            const seen: number[] = [];
            const input = Array.from({length: 8}, (_, index) => `Sentence number ${index + 1} is here.`).join(" ");
            const run = engine.synthesize({input, voice: "af_heart", speed: 1}, {
                signal: controller.signal,
                onAudio: (samples) => {
                    seen.push(samples.length);
                    controller.abort(reason);
                }
            });
            await expect(run).rejects.toBe(reason);
            expect(seen).toHaveLength(1);
            expect(engine.load()).toEqual({parallel: 1, busy: 0, waiting: 0});
            // The only worker is free: the next request runs to the end.
            expect((await collect(engine, {input: "After. Cancel."})).chunks).toHaveLength(2);
        } finally {
            await engine.dispose();
            await single.close();
        }
    });

    it("a cancelled task starts no sentence beyond the one-sentence lookahead", async () => {
        const single = new WorkerPool({workers: 1});
        try {
            const delivered = new Int32Array(new SharedArrayBuffer(4));
            const started = new Int32Array(new SharedArrayBuffer(4));
            const controller = new AbortController();
            const task: SynthesizeTask = {
                model: speechModelSpec("tts", tinyKokoroPath, {dtype: null, defaultVoice: null, voices: {}}, 1),
                sentences: Array.from({length: 8}, (_, index) => `Sentence ${index + 1}.`), voice: "af_heart", speed: 1,
                delivered, lookahead: 1, started
            };
            const indices: number[] = [];
            const run = single.run(speechTaskHandles.synthesize, task, {
                signal: controller.signal,
                onProgress: (message) => {
                    indices.push(message.index);
                    controller.abort(new Error("stop"));
                    Atomics.add(delivered, 0, 1);
                    Atomics.notify(delivered, 0);
                }
            });
            await expect(run).rejects.toThrow("stop");
            expect(indices).toEqual([0]);
            // Sentence 0, and at most sentence 1 (started before the first delivery); never 2..7.
            expect(Atomics.load(started, 0)).toBeGreaterThanOrEqual(1);
            expect(Atomics.load(started, 0)).toBeLessThanOrEqual(2);
        } finally {
            await single.close();
        }
    });

    it("a consumer that throws stops the task and the call rejects with its error", async () => {
        const failure = new Error("encoder broke");
        const run = kokoro.synthesize({input: "One. Two. Three.", voice: "af_heart", speed: 1}, {
            signal: new AbortController().signal, onAudio: () => {
                throw failure;
            }
        });
        await expect(run).rejects.toBe(failure);
        expect(kokoro.load().busy).toBe(0);
    });

    it("throws QueueFullError synchronously once `parallel` run and `queueSize` wait", async () => {
        const engine = await OnnxSpeechEngine.load(pool, entry(tinyKokoroPath), {threads: 1, parallel: 1, queueSize: 1});
        try {
            const options = () => ({signal: new AbortController().signal, onAudio: () => {}});
            const job = {input: "Hold on.", voice: "af_heart", speed: 1};
            const first = engine.synthesize(job, options());
            const second = engine.synthesize(job, options());
            expect(engine.load()).toEqual({parallel: 1, busy: 1, waiting: 1});
            expect(() => engine.synthesize(job, options())).toThrow(QueueFullError);
            await Promise.all([first, second]);
        } finally {
            await engine.dispose();
        }
    });

    it("checks the manifest's voice fields at load, naming the model and the field", async () => {
        await expect(OnnxSpeechEngine.load(pool, entry(tinyKokoroPath, {defaultVoice: "af_nova"}, "kk"), {threads: 1, parallel: 1, queueSize: 1}))
            .rejects.toThrow("Model 'kk': manifest field 'defaultVoice' is 'af_nova'");
        await expect(OnnxSpeechEngine.load(pool, entry(tinyKokoroPath, {voices: {alloy: "af_missing"}}, "kk"), {threads: 1, parallel: 1, queueSize: 1}))
            .rejects.toThrow("Model 'kk': manifest field 'voices.alloy' names voice 'af_missing'");
        const custom = await OnnxSpeechEngine.load(pool, entry(tinyKokoroPath, {defaultVoice: "echo", voices: {nova: "bm_fable"}, dtype: "q8"}),
            {threads: 1, parallel: 1, queueSize: 1});
        expect(custom.defaultVoice).toBe("am_echo");
        expect(custom.voiceAliases.nova).toBe("bm_fable");
        await custom.dispose();
        expect(() => speechModelSpec("kk", tinyKokoroPath, {dtype: "q4", defaultVoice: null, voices: {}}, 1)).toThrow("dtype 'q4' needs");
        expect(speechModelSpec("kk", tinyKokoroPath, {dtype: null, defaultVoice: null, voices: {}}, 1)).toMatchObject({dtype: "q8", modelFileName: null});
    });

    it("lists only English Kokoro voices, defaults to the first when af_heart is absent, loads file-only dtypes by name, rejects unknown model types", async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "speech-folders-"));
        try {
            const folder = path.join(dir, "kokoro");
            makeTestKokoroOnnx(folder, {voices: ["bf_emma", "am_onyx", "jf_alpha", "zm_yunxi", "ef_dora"]});
            // The Kokoro export's model_q8f16.onnx has no transformers.js dtype: loaded by file name.
            fs.renameSync(path.join(folder, "onnx", "model.onnx"), path.join(folder, "onnx", "model_q8f16.onnx"));
            fs.rmSync(path.join(folder, "onnx", "model_quantized.onnx"));
            const engine = await OnnxSpeechEngine.load(pool, entry(folder, {dtype: "q8f16"}), {threads: 1, parallel: 1, queueSize: 1});
            expect(engine.voices).toEqual(["am_onyx", "bf_emma"]);
            expect(engine.defaultVoice).toBe("am_onyx");
            expect(engine.voiceAliases).toEqual({onyx: "am_onyx"});
            const british = await collect(engine, {input: "Hello.", voice: "bf_emma"});
            expect(british.result.inputTokens).toBe(7);
            await engine.dispose();
            expect(speechModelSpec("k", folder, {dtype: null, defaultVoice: null, voices: {}}, 1)).toMatchObject({dtype: "fp32", modelFileName: "model_q8f16"});

            const other = path.join(dir, "other");
            fs.cpSync(folder, other, {recursive: true});
            fs.writeFileSync(path.join(other, "config.json"), JSON.stringify({model_type: "bert"}));
            await expect(OnnxSpeechEngine.load(pool, entry(other, {dtype: "q8f16"}), {threads: 1, parallel: 1, queueSize: 1}))
                .rejects.toThrow("config.json model_type 'bert' is not a supported speech model");
        } finally {
            fs.rmSync(dir, {recursive: true, force: true});
        }
    });
});
