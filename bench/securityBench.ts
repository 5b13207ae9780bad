/**
 * `npm run bench:security`: does one heavy request stall the others? The server (a child process: stories260K at
 * context 2048, and a generated model with Qwen2.5's tool-calling template at context 32768) receives each heavy
 * request of securityCases.ts, 2 at a time, 6 times and for at least 3 s (`--rounds`, `--min-case-ms`: with 2 rounds a case
 * had 30-60 polls, and its p99 was its max),
 * each model loaded first by a small request (a row of its own: no attack's figures include a load); meanwhile a process of the bench's polls `/health/live` every
 * 10 ms at the normal priority while the bench's sending runs below it (bench/livePoller.ts: `--client-nice`, default
 * 10; 0 for the setup before, a worker thread at the sender's priority, which measured the bench's own stalls too). Prints, per
 * case, what the requests got and the poll's p99 and max while they ran (a poll still waiting when the case ends
 * counts with the time it waited so far), and the server's own longest event-loop delay meanwhile (its /metrics). A request that gets no answer within `--timeout-ms` (default 90 s)
 * restarts the server before the next case. Then reads of a large stored response: a Responses request whose input
 * carries a 9.5 MB reasoning item (`encrypted_content`, stored, never rendered), then its `input_items` read 3 at a
 * time, 10 times, with /health/live polled the same way. Then stalled uploads against --max-body-memory
 * (bench/stalledUploads.ts), and audio uploads that decode to hours (bench/audioBombsCase.ts).
 *
 * `-- --only <text>` runs the cases whose name contains the text (repeatable); `-- --server-root <dir>` runs the
 * server of another checkout (a before/after comparison). Figures: docs/security.md ("Heavy requests", "Stored
 * responses", "Request bodies in memory", "Audio uploads").
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { makeTestLlamaGguf, toolCallVocab, toolsChatTemplate } from "../test/support/gguf/makeTestLlamaGguf.js";
import { securityCases } from "./securityCases.js";
import { audioBombsCase } from "./audioBombsCase.js";
import { LivePoller } from "./livePoller.js";
import { BenchServer } from "./serverClient.js";
import { stalledUploadsCase } from "./stalledUploads.js";
import { fixed, median, percentile } from "./stats.js";

const {values: args} = parseArgs({options: {
    only: {type: "string", multiple: true},
    "timeout-ms": {type: "string", default: "90000"},
    rounds: {type: "string", default: "6"},
    "min-case-ms": {type: "string", default: "3000"},
    concurrency: {type: "string", default: "2"},
    "server-root": {type: "string"},
    "client-nice": {type: "string", default: "10"}
}});
const timeoutMs = Number(args["timeout-ms"]);
const rounds = Number(args.rounds);
const minCaseMs = Number(args["min-case-ms"]);
const concurrency = Number(args.concurrency);

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "los-bench-security-"));
const toolsModelPath = path.join(tmp, "tools.gguf");
// Llama 3.1's template writes `Today Date: {{ date_string }}` (a variable clients set through chat_template_kwargs).
await makeTestLlamaGguf(toolsModelPath, {
    seed: 1, extraVocab: toolCallVocab,
    chatTemplate: "{%- if date_string is defined %}{{- 'Today Date: ' + date_string + '\\n\\n' }}{%- endif %}" + toolsChatTemplate
});
const manifestPath = path.join(tmp, "models.json");
fs.writeFileSync(manifestPath, JSON.stringify({models: [
    {id: "stories", task: "chat", path: path.join(root, "models/demo/stories260K.gguf"), contextSize: 2048},
    {id: "tools", task: "chat", path: toolsModelPath, contextSize: 32768}
]}));
const startServer = () => BenchServer.start({cwd: args["server-root"] ?? root, manifestPath, keysFile: path.join(tmp, "no-keys.json"), threads: 1, parallel: 2, startTimeoutMs: 120_000});

const wanted = (name: string) => args.only == null || args.only.some((text) => name.includes(text));

/**
 * The server's own longest event-loop delay (ms) since the last call: prom-client's `nodejs_eventloop_lag_max_seconds`
 * (monitorEventLoopDelay, reset at each scrape of /metrics). What the server's main thread was held for, whatever the
 * bench's own processes cost the shared cores: the polls above measure the client's view, this the server's.
 */
async function serverLoopMaxMs(baseUrl: string): Promise<number> {
    const text = await (await fetch(`${baseUrl}/metrics`)).text();
    return Number(/^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)?.[1] ?? NaN) * 1000;
}

type Answer = {status: number | "timeout", message: string, ms: number};

async function send(baseUrl: string, route: string, body: Uint8Array): Promise<Answer> {
    const started = performance.now();
    try {
        const response = await fetch(`${baseUrl}${route}`, {method: "POST", headers: {"Content-Type": "application/json"}, body, signal: AbortSignal.timeout(timeoutMs)});
        const text = await response.text();
        let message = "";
        try {
            const parsed = JSON.parse(text) as {error?: {message?: string}, input_tokens?: number};
            message = parsed.error?.message ?? (parsed.input_tokens != null ? `input_tokens ${parsed.input_tokens}` : "");
        } catch {
            message = text.slice(0, 80);
        }
        return {status: response.status, message, ms: performance.now() - started};
    } catch {
        return {status: "timeout", message: `no answer within ${timeoutMs} ms`, ms: performance.now() - started};
    }
}

/**
 * What new memory costs this machine: touching 10 MB of freshly mapped memory (its page faults), median of 5. Every MB
 * of a request that the server's main thread copies into new memory costs about a tenth of it there.
 */
function freshMemoryMs(): number {
    const times: number[] = [];
    for (let round = 0; round < 5; round++) {
        const started = performance.now();
        Buffer.allocUnsafeSlow(10 * 1024 * 1024).fill(1);
        times.push(performance.now() - started);
    }
    return median(times);
}

console.log(`Fresh memory: touching 10 MB of new memory takes ${fixed(freshMemoryMs(), 1)} ms here (median of 5; a few ms on most machines, far more in some VMs)`);
const poller = await LivePoller.start(Number(args["client-nice"]));
const pollLive = (baseUrl: string, until: Promise<unknown>) => poller.poll(baseUrl, until);
let server = await startServer();
try {
    const idle = await pollLive(server.baseUrl, new Promise((resolve) => setTimeout(resolve, 2000)));
    console.log(`/health/live idle: median ${fixed(median(idle), 1)} ms, p99 ${fixed(percentile(idle, 0.99), 1)} ms, max ${fixed(Math.max(...idle), 1)} ms (${idle.length} polls)`);
    console.log(`\n| case | answer | ms per request (median) | /health/live p99 | max | polls | server event loop max |\n|---|---|---|---|---|---|---|`);
    // The models load on demand (docs/models.md): each is loaded by a small request first, measured as a row of its own,
    // so that no attack's figures include a model's load.
    for (const model of ["stories", "tools"]) {
        await serverLoopMaxMs(server.baseUrl);
        let answer: Answer | undefined;
        const polls = await pollLive(server.baseUrl, (async () => {
            answer = await send(server.baseUrl, "/v1/chat/completions", Buffer.from(JSON.stringify({model, messages: [{role: "user", content: "hi"}], max_tokens: 1})));
        })());
        const loopMax = await serverLoopMaxMs(server.baseUrl).catch(() => NaN);
        console.log(`| (not an attack) first request for ${model}: its load | ${answer?.status} | ${fixed(answer?.ms ?? NaN, 0)} | ` +
            `${fixed(percentile(polls, 0.99), 0)} | ${fixed(Math.max(...polls), 0)} | ${polls.length} | ${fixed(loopMax, 0)} |`);
    }
    for (const build of securityCases()) {
        const heavy = build();
        if (!wanted(heavy.name))
            continue;
        // Encoded once: fetch would encode a string body again for every request.
        const body = Buffer.from(heavy.body);
        const answers: Answer[] = [];
        await serverLoopMaxMs(server.baseUrl);
        const load = (async () => {
            const started = performance.now();
            for (let round = 0; round < rounds || performance.now() - started < minCaseMs; round++) {
                const got = await Promise.all(Array.from({length: concurrency}, () => send(server.baseUrl, heavy.route, body)));
                answers.push(...got);
                if (got.some((answer) => answer.status === "timeout"))
                    break;
            }
        })();
        const polls = await pollLive(server.baseUrl, load);
        const loopMax = await serverLoopMaxMs(server.baseUrl).catch(() => NaN);
        const statuses = [...new Set(answers.map((answer) => answer.status))].join("/");
        const message = answers.find((answer) => answer.message !== "")?.message.slice(0, 90) ?? "";
        console.log(`| ${heavy.name} | ${statuses}${message === "" ? "" : `: ${message}`} | ${fixed(median(answers.map((answer) => answer.ms)), 0)} | ` +
            `${fixed(percentile(polls, 0.99), 0)} | ${fixed(Math.max(...polls), 0)} | ${polls.length} | ${fixed(loopMax, 0)} |`);
        if (answers.some((answer) => answer.status === "timeout")) {
            await server.stop(1000);
            server = await startServer();
        }
    }

    // Reads of a large stored response: serialized on every GET, they held the main thread (58 MB: 758 ms).
    if (wanted("stored response")) {
        const storing = await fetch(`${server.baseUrl}/v1/responses`, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({
            model: "stories", max_output_tokens: 1,
            input: [{type: "reasoning", summary: [], encrypted_content: "e".repeat(9.5 * 1024 * 1024)}, {role: "user", content: "Once upon a time"}]
        })});
        const stored = await storing.json() as {id?: string, error?: {message: string}};
        if (stored.id == null)
            console.log(`\nreading a 9.5 MB stored response: not stored (${storing.status}: ${stored.error?.message.slice(0, 110)})`);
        else {
            const readMs: number[] = [];
            let bytes = 0;
            const reads = (async () => {
                for (let round = 0; round < 10; round++)
                    await Promise.all([0, 1, 2].map(async () => {
                        const started = performance.now();
                        bytes = (await (await fetch(`${server.baseUrl}/v1/responses/${stored.id}/input_items`)).arrayBuffer()).byteLength;
                        readMs.push(performance.now() - started);
                    }));
            })();
            const reading = await pollLive(server.baseUrl, reads);
            console.log(`\n/health/live while 3 at a time read a stored response's ${fixed(bytes / 1024 / 1024, 1)} MB input_items: median ${fixed(median(reading), 1)} ms, ` +
                `p99 ${fixed(percentile(reading, 0.99), 1)} ms, max ${fixed(Math.max(...reading), 1)} ms (${reading.length} polls; a read: median ${fixed(median(readMs), 0)} ms)`);
        }
    }
} finally {
    await server.stop();
    fs.rmSync(tmp, {recursive: true, force: true});
}

// Stalled uploads and --max-body-memory (bench/stalledUploads.ts): server RSS with and without the cap.
if (wanted("stalled uploads"))
    await stalledUploadsCase(root);

// Audio uploads that decode to hours (bench/audioBombsCase.ts): refusals, /health/live, the server's RSS.
if (wanted("audio"))
    await audioBombsCase(root, pollLive);
poller.stop();
