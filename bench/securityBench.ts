/**
 * `npm run bench:security`: does one heavy request stall the others? The server (a child process,
 * stories260K, context 2048) receives, 3 at a time and repeatedly, requests that are heavy by
 * construction: a ~9.9 MB prompt on chat completions and on legacy completions, and a chat request
 * whose json_schema has a 40,000-value enum; meanwhile /health is polled (from a worker thread of the bench,
 * so that the bench's own sending of 10 MB bodies does not delay the polls). Prints /health latency
 * (median, p99, max) idle and under that load, and what the heavy requests got. Then reads of a large stored
 * response: a Responses request whose input carries a 9.5 MB reasoning item (`encrypted_content`, stored, never
 * rendered), then its `input_items` read 3 at a time, 10 times, with /health polled the same way. Then stalled
 * uploads against --max-body-memory (bench/stalledUploads.ts).
 * Figures: docs/security.md ("Heavy requests", "Stored responses").
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { BenchServer } from "./serverClient.js";
import { stalledUploadsCase } from "./stalledUploads.js";
import { fixed, median } from "./stats.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "los-bench-security-"));
const manifestPath = path.join(tmp, "models.json");
fs.writeFileSync(manifestPath, JSON.stringify({models: [{id: "stories", task: "chat", path: path.join(root, "models/demo/stories260K.gguf"), contextSize: 2048}]}));
const server = await BenchServer.start({cwd: root, manifestPath, keysFile: path.join(tmp, "no-keys.json"), threads: 1, parallel: 2, startTimeoutMs: 60_000});

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))];

/**
 * Polls /health every 10 ms from a worker thread until `until()` holds: the bench's own main thread
 * is busy sending 10 MB bodies, and a poller there would measure the client's stalls, not the server's.
 */
async function pollHealth(until: () => boolean): Promise<number[]> {
    const worker = new Worker(`
        const {parentPort, workerData} = require("node:worker_threads");
        let stop = false;
        parentPort.on("message", () => stop = true);
        (async () => {
            const latencies = [];
            while (!stop) {
                const started = performance.now();
                await (await fetch(workerData.url + "/health")).arrayBuffer();
                latencies.push(performance.now() - started);
                await new Promise((resolve) => setTimeout(resolve, 10));
            }
            parentPort.postMessage(latencies);
        })();`, {eval: true, workerData: {url: server.baseUrl}});
    const latencies = new Promise<number[]>((resolve) => worker.once("message", resolve));
    while (!until())
        await new Promise((resolve) => setTimeout(resolve, 20));
    worker.postMessage("stop");
    const result = await latencies;
    await worker.terminate();
    return result;
}

const bigPrompt = "The quick brown fox jumps over the lazy dog. ".repeat(Math.floor(9.9 * 1024 * 1024 / 45));
const bigEnum = {type: "object", properties: {pick: {type: "string", enum: Array.from({length: 40_000}, (_, index) => `value-${index}`)}}, required: ["pick"]};
const heavy: [string, string, unknown][] = [
    ["chat, 9.9 MB prompt", "/v1/chat/completions", {model: "stories", messages: [{role: "user", content: bigPrompt}], max_tokens: 1}],
    ["completions, 9.9 MB prompt", "/v1/completions", {model: "stories", prompt: bigPrompt, max_tokens: 1}],
    ["chat, 40,000-value enum", "/v1/chat/completions", {model: "stories", messages: [{role: "user", content: "pick"}], max_tokens: 4, response_format: {type: "json_schema", json_schema: {name: "pick", schema: bigEnum}}}]
];

try {
    let idleDone = false;
    setTimeout(() => idleDone = true, 2000);
    const idle = await pollHealth(() => idleDone);

    const answers = new Map<string, {status: number, message: string, ms: number[]}>();
    let loadDone = false;
    const load = (async () => {
        for (let round = 0; round < 5; round++)
            for (const [name, route, body] of heavy) {
                const text = JSON.stringify(body);
                await Promise.all([0, 1, 2].map(async () => {
                    const started = performance.now();
                    const response = await fetch(`${server.baseUrl}${route}`, {method: "POST", headers: {"Content-Type": "application/json"}, body: text});
                    const answer = await response.json() as {error?: {message: string}};
                    const entry = answers.get(name) ?? {status: response.status, message: answer.error?.message ?? "", ms: []};
                    entry.ms.push(performance.now() - started);
                    answers.set(name, entry);
                }));
            }
        loadDone = true;
    })();
    const busy = await pollHealth(() => loadDone);
    await load;

    console.log(`/health latency, ms: idle median ${fixed(median(idle), 1)} p99 ${fixed(percentile(idle, 0.99), 1)} max ${fixed(Math.max(...idle), 1)} (${idle.length} polls)`);
    console.log(`/health latency, ms: under heavy requests median ${fixed(median(busy), 1)} p99 ${fixed(percentile(busy, 0.99), 1)} max ${fixed(Math.max(...busy), 1)} (${busy.length} polls)`);
    for (const [name, {status, message, ms}] of answers)
        console.log(`  ${name}: ${status}, median ${fixed(median(ms), 0)} ms per request (3 at a time): ${message.slice(0, 110)}`);

    // Reads of a large stored response: serialized on every GET, they held the main thread (58 MB: 758 ms).
    const storing = await fetch(`${server.baseUrl}/v1/responses`, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({
        model: "stories", max_output_tokens: 1,
        input: [{type: "reasoning", summary: [], encrypted_content: "e".repeat(9.5 * 1024 * 1024)}, {role: "user", content: "Once upon a time"}]
    })});
    const stored = await storing.json() as {id?: string, error?: {message: string}};
    if (stored.id == null)
        console.log(`  reading a 9.5 MB stored response: not stored (${storing.status}: ${stored.error?.message.slice(0, 110)})`);
    else {
        const readMs: number[] = [];
        let bytes = 0;
        let readsDone = false;
        const reads = (async () => {
            for (let round = 0; round < 10; round++)
                await Promise.all([0, 1, 2].map(async () => {
                    const started = performance.now();
                    bytes = (await (await fetch(`${server.baseUrl}/v1/responses/${stored.id}/input_items`)).arrayBuffer()).byteLength;
                    readMs.push(performance.now() - started);
                }));
            readsDone = true;
        })();
        const reading = await pollHealth(() => readsDone);
        await reads;
        console.log(`/health latency, ms: while 3 at a time read a stored response's ${fixed(bytes / 1024 / 1024, 1)} MB input_items median ${fixed(median(reading), 1)} p99 ${fixed(percentile(reading, 0.99), 1)} max ${fixed(Math.max(...reading), 1)} (${reading.length} polls; a read: median ${fixed(median(readMs), 0)} ms)`);
    }
} finally {
    await server.stop();
    fs.rmSync(tmp, {recursive: true, force: true});
}

// Stalled uploads and --max-body-memory (bench/stalledUploads.ts): server RSS with and without the cap.
await stalledUploadsCase(root);
