/**
 * `npm run bench:transcription [-- --quick] [--runs N] [--workers N] [--onnx-threads N] [--seconds S]`: transcription
 * speed through the server (a child process, bench/serverClient.ts), side by side:
 *  - real-time factor (seconds of audio per second of wall time) of one `S`-second WAV (default 60, so two windows
 *    and more), json and streamed (time to the first delta), on the generated tiny Whisper-shaped test model and
 *    on a generated model of whisper-base's width (hidden 512, 6 + 6 blocks of a layer's size, 51865 logits, up to 224 tokens a window);
 *    each with Whisper's temperature fallback (the default) and without it (manifest `temperatureFallback: false`), and
 *    the share of windows that fell back (verbose_json segments decoded above temperature 0);
 *  - chat time-to-first-token, idle and while 2 transcriptions of the base-sized model run.
 * Random weights: the text is meaningless, and a random model's window may end early (fewer decoder steps than
 * speech would take), so the figures bound the cost of decoding and the encoder from below; they are not a real
 * Whisper's accuracy or speed.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { toFile } from "openai";
import { defaultConfig } from "../src/config.js";
import { makeTestLlamaGguf } from "../test/support/gguf/makeTestLlamaGguf.js";
import { encodeFixture, testSignal } from "../test/support/audioFixtures.js";
import { makeTestWhisperOnnx } from "../test/support/onnx/makeTestWhisperOnnx.js";
import { chatTtftUnderLoad } from "./chatTtft.js";
import { startOnnxBenchServer } from "./onnxBenchServer.js";
import { fixed, median } from "./stats.js";

const quick = process.argv.includes("--quick");
const flag = (name: string, fallback: number) => {
    const at = process.argv.indexOf(`--${name}`);
    return at === -1 ? fallback : Number(process.argv[at + 1]);
};
const runs = flag("runs", quick ? 1 : 3);
const workers = flag("workers", defaultConfig.workers);
const onnxThreads = flag("onnx-threads", defaultConfig.onnxThreads);
const seconds = flag("seconds", 60);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "transcription-bench-"));

const tinyPath = path.join(dir, "tiny-whisper");
const basePath = path.join(dir, "base-sized-whisper");
makeTestWhisperOnnx(tinyPath, {seed: 3});
makeTestWhisperOnnx(basePath, {seed: 3, hidden: 512, layers: 6, logits: 51_865, maxTargetPositions: 448});
const chatPath = path.join(dir, "chat.gguf");
await makeTestLlamaGguf(chatPath, {seed: 1});
const {server, client} = await startOnnxBenchServer(dir, [
    {id: "tiny", task: "transcription", path: tinyPath},
    {id: "base-sized", task: "transcription", path: basePath},
    {id: "tiny-no-fallback", task: "transcription", path: tinyPath, temperatureFallback: false},
    {id: "base-sized-no-fallback", task: "transcription", path: basePath, temperatureFallback: false},
    {id: "chat", task: "chat", path: chatPath, contextSize: 512, parallel: 2}
], {workers, onnxThreads, startTimeoutMs: 300_000});
const wav = await encodeFixture("wav", testSignal(seconds, 16_000), 16_000);

async function transcribe(model: string): Promise<number> {
    const started = performance.now();
    await client.audio.transcriptions.create({file: await toFile(wav, "bench.wav"), model});
    return performance.now() - started;
}

async function streamed(model: string): Promise<{firstMs: number, totalMs: number}> {
    const started = performance.now();
    const stream = await client.audio.transcriptions.create({file: await toFile(wav, "bench.wav"), model, stream: true});
    let firstMs = 0;
    for await (const event of stream)
        if (event.type === "transcript.text.delta" && firstMs === 0)
            firstMs = performance.now() - started;
    return {firstMs, totalMs: performance.now() - started};
}

/** Windows (distinct `seek`s) with a segment decoded above temperature 0, over all windows with segments. */
async function fallbackShare(model: string): Promise<string> {
    const verbose = await client.audio.transcriptions.create({file: await toFile(wav, "bench.wav"), model, response_format: "verbose_json"});
    const windows = new Map<number, boolean>();
    for (const segment of verbose.segments ?? [])
        windows.set(segment.seek, (windows.get(segment.seek) ?? false) || segment.temperature > 0);
    return `${[...windows.values()].filter(Boolean).length} of ${windows.size}`;
}

const rows: string[] = [];
for (const model of ["tiny", "tiny-no-fallback", "base-sized", "base-sized-no-fallback"]) {
    const fellBack = await fallbackShare(model);
    const whole: number[] = [];
    const stream: {firstMs: number, totalMs: number}[] = [];
    for (let run = 0; run < runs; run++) {
        whole.push(await transcribe(model));
        stream.push(await streamed(model));
    }
    const wholeMs = median(whole);
    rows.push(`| ${model} | ${fellBack} | ${seconds} | ${fixed(wholeMs, 0)} | ${fixed(seconds / (wholeMs / 1000), 1)} | ${fixed(median(stream.map((run) => run.firstMs)), 0)} | ${fixed(median(stream.map((run) => run.totalMs)), 0)} |`);
}

const samples = quick ? 5 : 10;
const {idle, busy} = await chatTtftUnderLoad(client, server.baseUrl, {model: "base-sized", streams: 2, samples, request: () => transcribe("base-sized")});
await server.stop();
fs.rmSync(dir, {recursive: true, force: true});

console.log(`\ntranscription: GENERATED RANDOM-WEIGHT WHISPER-SHAPED MODELS (not real models); ${os.cpus().length} cores, pool ${workers} workers x ${onnxThreads} thread(s); medians of ${runs}`);
console.log("RTF = seconds of audio per second of wall time (higher is faster)");
console.log("| model | windows fallen back | audio s | json ms | RTF | stream first delta ms | stream total ms |\n|---|---|---|---|---|---|---|");
console.log(rows.join("\n"));
console.log(`\nchat TTFT ms (median of ${samples}): idle ${fixed(median(idle), 1)}, while 2 base-sized transcriptions run ${fixed(median(busy), 1)}`);
