/**
 * `npm run bench:speech-encoding`: does audio encoding cost chat anything? An in-process server serves
 * stories260K (the committed demo model); chat's time to first token is measured idle, then while four
 * streams of 10 s mp3 encodes (pushed in 0.5 s chunks, as a speech response does) run on the main thread
 * (createAudioEncoder: how speech encoded before), then while the same four run in the encoder thread
 * (createOffThreadAudioEncoder: how speech encodes mp3, opus and flac now). One run, interleaved rounds.
 * Figures: docs/worker-pool.md.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import { defaultConfig } from "../src/config.js";
import { createLogger } from "../src/logger.js";
import { createAudioEncoder } from "../src/media/audio/createAudioEncoder.js";
import { createOffThreadAudioEncoder } from "../src/media/audio/OffThreadAudioEncoder.js";
import { startServer } from "../src/startServer.js";
import { chatTtft } from "./chatTtft.js";
import { fixed, median } from "./stats.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "los-bench-speech-encoding-"));
const manifest = path.join(dir, "models.json");
fs.writeFileSync(manifest, JSON.stringify({models: [{id: "chat", task: "chat", path: path.join(root, "models/demo/stories260K.gguf")}]}));
process.on("exit", () => fs.rmSync(dir, {recursive: true, force: true}));
const server = await startServer({...defaultConfig, port: 0, threads: 1, parallel: 2, gpu: "off", modelsConfig: manifest, apiKeysFile: path.join(dir, "keys.json"), logLevel: "error"}, createLogger("error"));
await server.ready;
const client = new OpenAI({baseURL: `${server.url}/v1`, apiKey: "unused", maxRetries: 0});

const rate = 24_000;
const audio = Float32Array.from({length: rate * 10}, (_, i) => 0.3 * Math.sin(2 * Math.PI * 150 * i / rate) * Math.sin(Math.PI * ((i / rate * 4) % 1)) ** 2);
const chunk = rate / 2;

/** Four encodes of 10 s of mp3 at a time, over and over, until stopped. */
function encodeLoad(create: typeof createAudioEncoder) {
    let running = true;
    let encodedSeconds = 0;
    const loops = Promise.all(Array.from({length: 4}, async () => {
        while (running) {
            const encoder = await create("mp3", {inputSampleRate: rate, streaming: true});
            for (let at = 0; at < audio.length && running; at += chunk) {
                await encoder.push(audio.subarray(at, at + chunk));
                encodedSeconds += chunk / rate;
                // A response's next chunk comes on a later event-loop turn (from the synthesis worker), never in the same one.
                await new Promise((resolve) => setImmediate(resolve));
            }
            await encoder.end();
        }
    }));
    return {stop: async () => {
        running = false;
        await loops;
        return encodedSeconds;
    }};
}

const rounds = 4;
const perRound = 5;
const results = {idle: [] as number[], main: [] as number[], thread: [] as number[]};
const encoded = {main: 0, thread: 0};
const wall = {main: 0, thread: 0};
await chatTtft(client);
for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < perRound; i++)
        results.idle.push(await chatTtft(client));
    for (const side of ["main", "thread"] as const) {
        const started = performance.now();
        const load = encodeLoad(side === "main" ? createAudioEncoder : createOffThreadAudioEncoder);
        await new Promise((resolve) => setTimeout(resolve, 100));
        for (let i = 0; i < perRound; i++)
            results[side].push(await chatTtft(client));
        encoded[side] += await load.stop();
        process.stderr.write(`round ${round + 1} ${side}: ${fixed(median(results[side].slice(-perRound)), 1)} ms\n`);
        wall[side] += performance.now() - started;
    }
}
await server.close();
fs.rmSync(dir, {recursive: true, force: true});

console.log(`chat TTFT (stories260K, ${os.cpus().length} cores), median of ${rounds * perRound} per column, ${rounds} interleaved rounds:`);
console.log("| | idle | 4 mp3 encodes on the main thread | 4 mp3 encodes in the encoder thread |\n|---|---|---|---|");
console.log(`| TTFT ms | ${fixed(median(results.idle), 1)} | ${fixed(median(results.main), 1)} | ${fixed(median(results.thread), 1)} |`);
console.log(`| audio encoded meanwhile, s per wall s | - | ${fixed(encoded.main / (wall.main / 1000), 1)} | ${fixed(encoded.thread / (wall.thread / 1000), 1)} |`);

