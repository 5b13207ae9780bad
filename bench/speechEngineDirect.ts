/**
 * Speech synthesis timed on the engine directly (OnnxSpeechEngine on its own WorkerPool, no HTTP,
 * no encoding): real-time factor and time to the first sentence's audio. `timeSpeechEngineDirect`
 * is what `npm run bench:speech` compares the server against; run this file alone for the engine's
 * figures: `npx tsx bench/speechEngineDirect.ts [--model <folder>] [--dtype q8] [--runs 5] [--workers 2] [--threads 1]`
 * (without --model: the generated tiny Kokoro-shaped test model, which measures the pipeline's own
 * cost: phonemizer, tokenizer, pool, transfers).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { OnnxSpeechEngine } from "../src/capabilities/speech/onnx/OnnxSpeechEngine.js";
import type { SpeechSettings } from "../src/capabilities/speech/speechManifest.js";
import type { ModelEntry } from "../src/core/registry/ModelEntry.js";
import { WorkerPool } from "../src/core/workers/WorkerPool.js";

export type SpeechTimingOptions = {
    /** Model folder (config.json, tokenizer.json, onnx/, voices/). */
    modelPath: string;
    input: string;
    dtype?: SpeechSettings["dtype"];
    /** Default: the model's default voice. */
    voice?: string;
    speed?: number;
    /** Measured repetitions (after one warm-up per concurrent request); medians are reported. */
    runs?: number;
    /** Requests started together in each repetition. */
    concurrency?: number;
    workers?: number;
    /** ONNX Runtime intra-op threads per worker session. */
    threads?: number;
};

/** One request's figures. */
export type SpeechRequestTiming = {
    /** From the call to the first sentence's samples on the main thread. */
    firstAudioMs: number;
    totalMs: number;
    audioSeconds: number;
    sentences: number;
    inputTokens: number;
};

export type SpeechTimingResult = {
    /** Medians over all requests of all repetitions. */
    firstAudioMs: number;
    totalMs: number;
    audioSeconds: number;
    /** Seconds of audio per second of wall time, all concurrent requests together (median over repetitions). */
    realTimeFactor: number;
    sentences: number;
    inputTokens: number;
    sampleRate: number;
    requests: SpeechRequestTiming[];
};

export async function timeSpeechEngineDirect(options: SpeechTimingOptions): Promise<SpeechTimingResult> {
    const concurrency = options.concurrency ?? 1;
    const workers = options.workers ?? Math.max(1, Math.min(concurrency, os.availableParallelism()));
    const pool = new WorkerPool({workers});
    const entry: ModelEntry<SpeechSettings> = {
        id: "bench-speech", task: "speech", path: path.resolve(options.modelPath), family: null, released: null, aliases: [], ownedBy: "bench",
        contextSize: null, threads: null, parallel: null, settings: {dtype: options.dtype ?? null, defaultVoice: null, voices: {}}
    };
    const engine = await OnnxSpeechEngine.load(pool, entry, {threads: options.threads ?? 1, parallel: concurrency, queueSize: concurrency});
    const voice = options.voice ?? engine.defaultVoice;
    const one = async (): Promise<SpeechRequestTiming> => {
        const start = performance.now();
        let firstAudio = Number.NaN;
        let samples = 0;
        let sentences = 0;
        const result = await engine.synthesize({input: options.input, voice, speed: options.speed ?? 1}, {
            signal: new AbortController().signal,
            onAudio: (chunk) => {
                if (sentences++ === 0)
                    firstAudio = performance.now();
                samples += chunk.length;
            }
        });
        const end = performance.now();
        return {firstAudioMs: firstAudio - start, totalMs: end - start, audioSeconds: samples / engine.sampleRate, sentences, inputTokens: result.inputTokens};
    };
    try {
        // Warm-up: every worker loads the model and the phonemizer.
        await Promise.all(Array.from({length: Math.max(concurrency, workers)}, one));
        const requests: SpeechRequestTiming[] = [];
        const factors: number[] = [];
        for (let run = 0; run < (options.runs ?? 5); run++) {
            const start = performance.now();
            const timings = await Promise.all(Array.from({length: concurrency}, one));
            const wall = (performance.now() - start) / 1000;
            factors.push(timings.reduce((sum, timing) => sum + timing.audioSeconds, 0) / wall);
            requests.push(...timings);
        }
        return {
            firstAudioMs: median(requests.map((request) => request.firstAudioMs)),
            totalMs: median(requests.map((request) => request.totalMs)),
            audioSeconds: median(requests.map((request) => request.audioSeconds)),
            realTimeFactor: median(factors),
            sentences: requests[0].sentences,
            inputTokens: requests[0].inputTokens,
            sampleRate: engine.sampleRate,
            requests
        };
    } finally {
        await engine.dispose();
        await pool.close();
    }
}

function median(values: number[]): number {
    const sorted = [...values].sort((a, b) => a - b);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The benchmark's inputs: one sentence, and ten sentences of similar length. */
export const oneSentence = "The quick brown fox jumps over the lazy dog while the sun sets behind the hills.";
export const tenSentences = [
    oneSentence,
    "Kokoro is a small text to speech model with eighty two million parameters.",
    "It reads phonemes that espeak produces from the text, one sentence at a time.",
    "Each sentence is sent to the client as soon as it has been synthesized.",
    "So the first audio arrives long before the whole text has been spoken.",
    "A client that goes away stops the work at the next sentence boundary.",
    "Every output format is encoded in the same process, with no external program.",
    "The worker pool keeps the model loaded between requests, in every thread.",
    "Several requests can run at once, each one on a worker of its own.",
    "This is the tenth and last sentence of the benchmark's longer input."
].join(" ");

if (process.argv[1] != null && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
    const flag = (name: string) => {
        const at = process.argv.indexOf(`--${name}`);
        return at === -1 ? undefined : process.argv[at + 1];
    };
    let modelPath = flag("model");
    if (modelPath == null) {
        const {makeTestKokoroOnnx} = await import("../test/support/onnx/makeTestKokoroOnnx.js");
        modelPath = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "speech-bench-")), "kokoro");
        makeTestKokoroOnnx(modelPath);
        console.log(`No --model: the generated tiny Kokoro-shaped model (${modelPath}).`);
    }
    const runs = Number(flag("runs") ?? 5);
    const workers = flag("workers") == null ? undefined : Number(flag("workers"));
    const threads = Number(flag("threads") ?? 1);
    const dtype = (flag("dtype") ?? null) as SpeechSettings["dtype"];
    console.log("input          concurrency  sentences  first audio ms  total ms  audio s  real-time factor");
    for (const [name, input] of [["1 sentence", oneSentence], ["10 sentences", tenSentences]] as const)
        for (const concurrency of [1, 4]) {
            const result = await timeSpeechEngineDirect({modelPath, input, runs, concurrency, workers, threads, dtype});
            console.log(`${name.padEnd(15)}${String(concurrency).padStart(11)}${String(result.sentences).padStart(11)}${result.firstAudioMs.toFixed(1).padStart(16)}`
                + `${result.totalMs.toFixed(1).padStart(10)}${result.audioSeconds.toFixed(2).padStart(9)}${result.realTimeFactor.toFixed(1).padStart(18)}`);
        }
}
