/**
 * `npm run bench:speech [-- <model folder>] [--quick] [--runs N] [--workers N] [--onnx-threads N]`: speech synthesis
 * speed, side by side:
 *  - the engine called directly (OnnxSpeechEngine on its own worker pool, no HTTP, no encoding) versus through the server,
 *    for a one-sentence and a ten-sentence input: real-time factor (seconds of audio per second of wall time) and time
 *    to the first audio (direct: first sentence handed over; server: first body byte);
 *  - per response_format: the server's figures, and the encoding cost alone (the direct run's audio pushed through the
 *    encoder sentence by sentence), as ms and as % of the synthesis time;
 *  - 1 and 4 concurrent requests through the server (aggregate real-time factor);
 *  - chat time-to-first-token, idle and while speech requests run.
 * The server runs in a child process (bench/serverClient.ts), so the client's reading never waits for the server's
 * event loop; the direct engine runs first, in this process, and is closed before the server starts.
 * Model: the folder given, else the first speech model of the served manifest (MODELS_CONFIG, models/models.json), else
 * the generated tiny random-weight Kokoro-shaped test model, with a warning that the figures are not a real model's.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import OpenAI from "openai";
import { createAudioEncoder } from "../src/media/audio/createAudioEncoder.js";
import { audioFormats, type AudioFormat } from "../src/media/audio/audioFormats.js";
import { OnnxSpeechEngine } from "../src/capabilities/speech/onnx/OnnxSpeechEngine.js";
import type { SpeechSettings } from "../src/capabilities/speech/speechManifest.js";
import { defaultConfig } from "../src/config.js";
import type { ModelEntry } from "../src/core/registry/ModelEntry.js";
import { WorkerPool } from "../src/core/workers/WorkerPool.js";
import { makeTestLlamaGguf } from "../test/support/gguf/makeTestLlamaGguf.js";
import { makeTestKokoroOnnx } from "../test/support/onnx/makeTestKokoroOnnx.js";
import { BenchServer } from "./serverClient.js";
import { oneSentence, tenSentences, timeSpeechEngineDirect, type SpeechTimingResult } from "./speechEngineDirect.js";
import { fixed, median } from "./stats.js";
import { chatTtft } from "./chatTtft.js";

const quick = process.argv.includes("--quick");
const flag = (name: string, fallback: number) => {
    const at = process.argv.indexOf(`--${name}`);
    return at === -1 ? fallback : Number(process.argv[at + 1]);
};
const runs = flag("runs", quick ? 1 : 3);
const workers = flag("workers", defaultConfig.workers);
const onnxThreads = flag("onnx-threads", defaultConfig.onnxThreads);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "speech-bench-"));

const inputs = {"1 sentence": oneSentence, "10 sentences": tenSentences};

/** The speech model: an argument, the served manifest's first speech model, or the generated test model. */
function speechModel(): {path: string, settings: Partial<SpeechSettings>, real: boolean} {
    const argument = process.argv.slice(2).find((arg, index, all) => !arg.startsWith("--") && !all[index - 1]?.startsWith("--"));
    if (argument != null)
        return {path: path.resolve(argument), settings: {}, real: true};
    const manifestPath = path.resolve(process.env.MODELS_CONFIG ?? defaultConfig.modelsConfig);
    if (fs.existsSync(manifestPath)) {
        const manifest = JSON.parse(fs.readFileSync(manifestPath, "utf8")) as {models: {task: string, path: string, dtype?: string}[]};
        const entry = manifest.models.find((model) => model.task === "speech");
        if (entry != null)
            return {path: path.resolve(path.dirname(manifestPath), entry.path), settings: {dtype: entry.dtype ?? null}, real: true};
    }
    const folder = path.join(dir, "tiny-kokoro");
    makeTestKokoroOnnx(folder, {seed: 1});
    console.warn("WARNING: no speech model given or served: using the generated tiny random-weight Kokoro-shaped test model. " +
        "These figures measure the plumbing (sentence splitting, phonemes, worker pool, encoders, HTTP), NOT a real model's synthesis speed.");
    return {path: folder, settings: {}, real: false};
}

const model = speechModel();
const entry: ModelEntry<SpeechSettings> = {
    id: "tts", task: "speech", path: model.path, family: null, released: null, aliases: [], ownedBy: "local", contextSize: null,
    threads: null, parallel: null, settings: {dtype: null, defaultVoice: null, voices: {}, ...model.settings}
};

// ---- 1. The engine directly: synthesis only (bench/speechEngineDirect.ts: its own pool, warm workers, medians).
const directFigures: Record<string, SpeechTimingResult> = {};
const directConcurrent: Record<number, SpeechTimingResult> = {};
for (const [name, input] of Object.entries(inputs))
    directFigures[name] = await timeSpeechEngineDirect({modelPath: model.path, input, dtype: model.settings.dtype ?? null, runs, concurrency: 1, workers, threads: onnxThreads});
for (const concurrency of [1, 4])
    directConcurrent[concurrency] = await timeSpeechEngineDirect({
        modelPath: model.path, input: tenSentences, dtype: model.settings.dtype ?? null, runs, concurrency, workers, threads: onnxThreads
    });
const directRtf = (name: string) => directFigures[name].audioSeconds / (directFigures[name].totalMs / 1000);

// The ten-sentence audio itself, sentence by sentence, for the encoders.
const pool = new WorkerPool({workers: 1});
const engine = await OnnxSpeechEngine.load(pool, entry, {threads: onnxThreads, parallel: 1, queueSize: 1});
const sampleRate = engine.sampleRate;
const tenSentenceAudio: Float32Array[] = [];
await engine.synthesize({input: tenSentences, voice: engine.defaultVoice, speed: 1}, {
    signal: new AbortController().signal, onAudio: (samples) => tenSentenceAudio.push(samples)
});
await engine.dispose();
await pool.close();

// ---- 2. Encoding alone: the ten-sentence audio pushed sentence by sentence, streamed.
const encodeMs: Record<AudioFormat, number> = {} as Record<AudioFormat, number>;
for (const format of audioFormats) {
    const times: number[] = [];
    for (let run = 0; run < Math.max(runs, 2); run++) {
        const started = performance.now();
        const encoder = await createAudioEncoder(format, {inputSampleRate: sampleRate, streaming: true});
        for (const sentence of tenSentenceAudio)
            await encoder.push(sentence);
        await encoder.end();
        times.push(performance.now() - started);
    }
    encodeMs[format] = median(times);
}

// ---- 3. Through the server.
const chatPath = path.join(dir, "chat.gguf");
await makeTestLlamaGguf(chatPath, {seed: 1});
const manifest = path.join(dir, "models.json");
fs.writeFileSync(manifest, JSON.stringify({models: [
    {id: "tts", task: "speech", path: model.path, parallel: 4, ...(model.settings.dtype != null ? {dtype: model.settings.dtype} : {})},
    {id: "chat", task: "chat", path: chatPath, contextSize: 512, parallel: 2}
]}));
process.env.WORKERS = String(workers);
process.env.ONNX_THREADS = String(onnxThreads);
const server = await BenchServer.start({
    cwd: process.cwd(), manifestPath: manifest, keysFile: path.join(dir, "no-keys.json"), threads: 1, parallel: 2, startTimeoutMs: 120_000
});
const serverUrl = server.baseUrl;
const client = new OpenAI({baseURL: `${serverUrl}/v1`, apiKey: "none", maxRetries: 0});

/** One request: ms to the first body byte and to the end. */
async function overHttp(input: string, format: AudioFormat): Promise<{firstMs: number, totalMs: number}> {
    const started = performance.now();
    const response = await fetch(`${serverUrl}/v1/audio/speech`, {
        method: "POST", headers: {"Content-Type": "application/json"},
        body: JSON.stringify({model: "tts", input, response_format: format})
    });
    if (response.status !== 200)
        throw new Error(`HTTP ${response.status}: ${await response.text()}`);
    const reader = response.body!.getReader();
    let firstMs = 0;
    for (;;) {
        const {value, done} = await reader.read();
        if (done)
            break;
        if (firstMs === 0 && value.length > 0)
            firstMs = performance.now() - started;
    }
    return {firstMs, totalMs: performance.now() - started};
}

await Promise.all(Array.from({length: workers}, () => overHttp(tenSentences, "wav")));
const serverRows: string[] = [];
for (const format of audioFormats) {
    for (const [name, input] of Object.entries(inputs)) {
        await overHttp(input, format);
        const results: {firstMs: number, totalMs: number}[] = [];
        for (let run = 0; run < runs; run++)
            results.push(await overHttp(input, format));
        const totalMs = median(results.map((result) => result.totalMs));
        const reference = directFigures[name];
        const encodeShare = name === "10 sentences" ? `${fixed(encodeMs[format], 0)} ms (${fixed(100 * encodeMs[format] / reference.totalMs, 1)} %)` : "";
        serverRows.push(`| ${format} | ${name} | ${fixed(reference.audioSeconds, 2)} | ${fixed(reference.firstAudioMs, 0)} | ${fixed(median(results.map((result) => result.firstMs)), 0)} | ` +
            `${fixed(directRtf(name), 1)} | ${fixed(reference.audioSeconds / (totalMs / 1000), 1)} | ${encodeShare} |`);
    }
}

const concurrencyRows: string[] = [];
for (const concurrency of [1, 4]) {
    const input = inputs["10 sentences"];
    await overHttp(input, "mp3");
    const started = performance.now();
    const results = await Promise.all(Array.from({length: concurrency}, () => overHttp(input, "mp3")));
    const wallMs = performance.now() - started;
    const direct = directConcurrent[concurrency];
    concurrencyRows.push(`| ${concurrency} | ${fixed(direct.firstAudioMs, 0)} | ${fixed(median(results.map((result) => result.firstMs)), 0)} | ${fixed(direct.totalMs, 0)} | ` +
        `${fixed(median(results.map((result) => result.totalMs)), 0)} | ${fixed(direct.realTimeFactor, 1)} | ${fixed(concurrency * directFigures["10 sentences"].audioSeconds / (wallMs / 1000), 1)} |`);
}

const ttft = () => chatTtft(client);
const samples = quick ? 5 : 10;
const idle: number[] = [];
for (let i = 0; i < samples; i++)
    idle.push(await ttft());
let loading = true;
const load = Promise.all(Array.from({length: 2}, async () => {
    while (loading)
        await overHttp(inputs["10 sentences"], "mp3");
}));
// The load is running once the first speech request is admitted.
while ((await (await fetch(`${serverUrl}/health`)).json() as {models: Record<string, {busy: number}>}).models.tts.busy === 0)
    await new Promise((resolve) => setImmediate(resolve));
const busy: number[] = [];
for (let i = 0; i < samples; i++)
    busy.push(await ttft());
loading = false;
await load;
await server.stop();
fs.rmSync(dir, {recursive: true, force: true});

console.log(`\nspeech: ${model.real ? model.path : "GENERATED TINY TEST MODEL (not a real model)"}, ${sampleRate} Hz; ${os.cpus().length} cores, pool ${workers} workers x ${onnxThreads} thread(s); medians of ${runs}`);
console.log("RTF = seconds of audio per second of wall time (higher is faster); first audio: direct = first sentence handed over, server = first body byte");
console.log("| format | input | audio s | direct first audio ms | server first byte ms | direct RTF | server RTF | encoding alone (10 sentences), % of synthesis |");
console.log("|---|---|---|---|---|---|---|---|");
console.log(serverRows.join("\n"));
console.log(`ten-sentence / one-sentence time to first byte (mp3): ${fixed(ratioOfFirstBytes(), 2)}x`);
console.log("\nconcurrent ten-sentence mp3 requests through the server");
console.log("| requests | direct first audio ms | server first byte ms | direct each ms | server each ms | direct aggregate RTF | server aggregate RTF |\n|---|---|---|---|---|---|---|");
console.log(concurrencyRows.join("\n"));
console.log(`\nchat TTFT ms (median of ${samples}): idle ${fixed(median(idle), 1)}, while 2 speech requests run ${fixed(median(busy), 1)}`);

function ratioOfFirstBytes() {
    const cell = (name: string) => Number(serverRows.find((row) => row.startsWith(`| mp3 | ${name} |`))!.split("|")[5]);
    return cell("10 sentences") / cell("1 sentence");
}
