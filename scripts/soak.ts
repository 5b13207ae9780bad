// `npm run soak`: mixed traffic against a real server process on loopback, with clients that abort at
// random points (before the headers, while queued or in prompt processing, mid-stream), for a bounded
// time and number of requests. Reports statuses, latency, RSS over time, file descriptors, and whether
// any sequence or worker is still busy at the end (it must not be).
//
//   npm run soak -- [--seconds 600] [--max-requests 1000000] [--concurrency 12] [--abort-rate 0.3] [--seed 1]
//
// Models: models/demo/stories260K.gguf (chat) and test/.models/tiny-bert (embeddings, written by
// `npm test`'s setup) when present.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const {values} = parseArgs({options: {
    seconds: {type: "string", default: "60"},
    "max-requests": {type: "string", default: "1000000"},
    concurrency: {type: "string", default: "12"},
    "abort-rate": {type: "string", default: "0.3"},
    seed: {type: "string", default: "1"},
    "warmup-seconds": {type: "string", default: "10"}
}});
const seconds = Number(values.seconds);
const maxRequests = Number(values["max-requests"]);
const concurrency = Number(values.concurrency);
const abortRate = Number(values["abort-rate"]);
const warmupSeconds = Number(values["warmup-seconds"]);

// A small seeded PRNG (mulberry32), so a run's traffic mix can be repeated.
let state = Number(values.seed) >>> 0;
const random = () => {
    state = (state + 0x6D2B79F5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)];

const stories = path.resolve(root, "models/demo/stories260K.gguf");
const bert = path.resolve(root, "test/.models/tiny-bert");
if (!fs.existsSync(stories)) {
    console.error(`error: ${stories} is missing (the soak's chat model).`);
    process.exit(1);
}
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "los-soak-"));
const manifest = path.join(dir, "models.json");
fs.writeFileSync(manifest, JSON.stringify({models: [
    {id: "stories", task: "chat", path: stories, contextSize: 1024, parallel: 4},
    ...(fs.existsSync(bert) ? [{id: "bert", task: "embeddings", path: bert}] : [])
]}));

const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", "--models", manifest, "--port", "0", "--queue-size", "8"], {
    cwd: root, env: {...process.env, LOG_LEVEL: "warn", API_KEYS: "", HOST: ""}, stdio: ["ignore", "pipe", "pipe"]
});
let output = "";
child.stdout.on("data", (data) => output += data);
child.stderr.on("data", (data) => output += data);
const url = await new Promise<string>((resolve, reject) => {
    const check = () => {
        const match = /listening on (http:\/\/\S+?)\/v1/.exec(output);
        if (match != null && output.includes("Ready."))
            resolve(match[1]);
    };
    child.stdout.on("data", check);
    child.on("exit", (code) => reject(new Error(`server exited with ${code}:\n${output}`)));
});

const rssOf = () => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${child.pid}/status`, "utf8"))![1]) * 1024;
const fdsOf = () => fs.readdirSync(`/proc/${child.pid}/fd`).length;

type Kind = "chat" | "chat-stream" | "embeddings" | "models" | "health" | "bad";
const kinds: Kind[] = ["chat", "chat-stream", "chat-stream", "embeddings", "models", "health", "bad"];
const counts = new Map<string, number>();
const latencies: number[] = [];
const count = (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);

function requestFor(kind: Kind): {path: string, init: RequestInit} {
    const post = (body: unknown) => ({method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
    const prompt = "Once upon a time ".repeat(1 + Math.floor(random() * 20));
    switch (kind) {
        case "chat": return {path: "/v1/chat/completions", init: post({model: "stories", messages: [{role: "user", content: prompt}], max_tokens: 1 + Math.floor(random() * 120), n: random() < 0.2 ? 2 : 1})};
        case "chat-stream": return {path: "/v1/chat/completions", init: post({model: "stories", messages: [{role: "user", content: prompt}], max_tokens: 1 + Math.floor(random() * 200), stream: true, stream_options: {include_usage: true}})};
        case "embeddings": return fs.existsSync(bert)
            ? {path: "/v1/embeddings", init: post({model: "bert", input: Array.from({length: 1 + Math.floor(random() * 8)}, () => prompt)})}
            : {path: "/v1/models", init: {}};
        case "models": return {path: "/v1/models", init: {}};
        case "health": return {path: "/health", init: {}};
        case "bad": return {path: "/v1/chat/completions", init: post({model: "stories", messages: [{role: "user", content: 5}], temperature: "hot"})};
    }
}

/** One request; with probability abortRate the client gives up at a random point. */
async function oneRequest() {
    const kind = pick(kinds);
    const {path: requestPath, init} = requestFor(kind);
    const abort = new AbortController();
    const aborting = random() < abortRate;
    const abortPoint = pick(["before-headers", "after-headers", "mid-body"] as const);
    // Before headers: while queued or in prompt processing (a short random delay).
    const timer = aborting && abortPoint === "before-headers" ? setTimeout(() => abort.abort(), Math.floor(random() * 150)) : undefined;
    const started = performance.now();
    try {
        const response = await fetch(`${url}${requestPath}`, {...init, signal: abort.signal});
        if (aborting && abortPoint === "after-headers") {
            abort.abort();
            count("aborted");
            return;
        }
        if (aborting && abortPoint === "mid-body" && response.body != null) {
            const reader = response.body.getReader();
            const chunks = Math.floor(random() * 5);
            for (let index = 0; index < chunks; index++)
                if ((await reader.read()).done)
                    break;
            abort.abort();
            count("aborted");
            return;
        }
        await response.arrayBuffer();
        count(String(response.status));
        latencies.push(performance.now() - started);
    } catch {
        count(abort.signal.aborted ? "aborted" : "network-error");
    } finally {
        clearTimeout(timer);
    }
}

const rssSamples: {t: number, rss: number}[] = [];
const startedAt = performance.now();
const deadline = startedAt + seconds * 1000;
let sent = 0;
const sampler = setInterval(() => rssSamples.push({t: (performance.now() - startedAt) / 1000, rss: rssOf()}), 5000);
const fdsStart = fdsOf();
console.log(`soak: ${seconds} s, up to ${maxRequests} requests, ${concurrency} clients, abort rate ${abortRate}, seed ${values.seed}; server ${url} (pid ${child.pid})`);
await Promise.all(Array.from({length: concurrency}, async () => {
    while (performance.now() < deadline && sent < maxRequests) {
        sent++;
        await oneRequest();
    }
}));
clearInterval(sampler);

// Drained: aborted work must free its sequence/worker promptly; wait (bounded) for /health to show it.
let health: {models: Record<string, {busy: number, waiting: number}>} = {models: {}};
for (let attempt = 0; attempt < 50; attempt++) {
    health = await (await fetch(`${url}/health`)).json() as typeof health;
    if (Object.values(health.models).every((load) => load.busy === 0 && load.waiting === 0))
        break;
    await new Promise((resolve) => setTimeout(resolve, 100));
}
const rssEnd = rssOf();
const fdsEnd = fdsOf();
child.kill("SIGTERM");
await new Promise((resolve) => child.on("exit", resolve));
fs.rmSync(dir, {recursive: true, force: true});

latencies.sort((a, b) => a - b);
const quantile = (q: number) => latencies.length === 0 ? NaN : latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
const afterWarmup = rssSamples.filter((sample) => sample.t >= warmupSeconds);
const slope = (() => {
    if (afterWarmup.length < 2)
        return NaN;
    const meanT = afterWarmup.reduce((sum, sample) => sum + sample.t, 0) / afterWarmup.length;
    const meanR = afterWarmup.reduce((sum, sample) => sum + sample.rss, 0) / afterWarmup.length;
    const numerator = afterWarmup.reduce((sum, sample) => sum + (sample.t - meanT) * (sample.rss - meanR), 0);
    const denominator = afterWarmup.reduce((sum, sample) => sum + (sample.t - meanT) ** 2, 0);
    return numerator / denominator;
})();
const mb = (bytes: number) => (bytes / 1e6).toFixed(1);
const rssWarm = afterWarmup[0]?.rss ?? rssSamples[0]?.rss ?? NaN;
const elapsed = (performance.now() - startedAt) / 1000;
console.log(`requests: ${sent} in ${elapsed.toFixed(0)} s (${(sent / elapsed).toFixed(1)}/s)`);
console.log(`by outcome: ${[...counts].sort().map(([key, value]) => `${key}: ${value}`).join(", ")}`);
console.log(`latency of completed requests: p50 ${quantile(0.5).toFixed(0)} ms, p99 ${quantile(0.99).toFixed(0)} ms`);
console.log(`RSS: after warm-up (${warmupSeconds} s) ${mb(rssWarm)} MB, end ${mb(rssEnd)} MB (${(((rssEnd - rssWarm) / rssWarm) * 100).toFixed(1)}%), slope after warm-up ${(slope * 60 / 1e6).toFixed(2)} MB/min`);
console.log(`file descriptors: start ${fdsStart}, end ${fdsEnd}`);
console.log(`busy at the end: ${JSON.stringify(health.models)}`);
const fiveHundreds = [...counts].filter(([key]) => /^5/.test(key) && key !== "503");
const busyLeft = Object.values(health.models).some((load) => load.busy !== 0 || load.waiting !== 0);
if (fiveHundreds.length > 0 || busyLeft) {
    console.log(`FAILED: ${fiveHundreds.length > 0 ? `5xx other than 503: ${JSON.stringify(fiveHundreds)}` : ""} ${busyLeft ? "work left busy" : ""}`);
    process.exitCode = 1;
}
