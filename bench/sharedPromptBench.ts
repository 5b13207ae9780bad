/**
 * `npm run bench:shared-prompt [-- --runs N] [--words N] [--skip-peer]`: requests that share a long system prompt and
 * arrive together (agents, a team's app): 2 and 4 streamed chat requests at once, each with the same new ~3,000-token
 * system prompt and its own question, `max_tokens` 8; and one request with `n` = 2, chat's most (ours only: llama-server serves one
 * choice per request). Timed from sending to the last request's first token and to the last one's end. This server
 * evaluates the shared prompt once and copies it to the other sequences (PrefixCopies); llama-server at its defaults
 * (`-np 4`, its host-memory prompt cache on, `--cache-reuse` off) evaluates it in each slot. Same 56 MB generated model,
 * threads 1, 4 sequences/slots of 4,096 tokens each, greedy; the sides take turns (one run of each, alternating order).
 */
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { buildLlamaServer } from "./peer/buildLlamaServer.js";
import { LlamaServerProcess } from "./peer/LlamaServerProcess.js";
import { cacheDir, peerContextSize, peerModelPath, projectRoot } from "./peer/peerModels.js";
import { BenchServer } from "./serverClient.js";
import { readSseEvents } from "./readSseEvents.js";

const {values: args} = parseArgs({options: {runs: {type: "string", default: "5"}, words: {type: "string", default: "1500"}, "skip-peer": {type: "boolean", default: false}}});
const runs = Number(args.runs);
const threads = 1;
const parallel = 4;

const modelPath = await peerModelPath("56mb");
const modelDir = path.dirname(modelPath);
const manifestPath = path.join(modelDir, "shared-prompt.models.json");
fs.writeFileSync(manifestPath, JSON.stringify({models: [{id: "bench", task: "chat", path: modelPath, contextSize: peerContextSize}]}));

type Side = {name: string, url: string, stop: () => Promise<void> | void};
const sides: Side[] = [];
const ours = await BenchServer.start({cwd: projectRoot, manifestPath, keysFile: path.join(modelDir, "no-keys.json"), threads, parallel, startTimeoutMs: 300_000});
sides.push({name: "ours", url: ours.baseUrl.replace(/\/v1$/, ""), stop: () => ours.stop()});
if (!args["skip-peer"]) {
    const binary = buildLlamaServer(projectRoot, cacheDir);
    const peer = await LlamaServerProcess.start(binary, [
        "-m", modelPath, "-t", String(threads), "-tb", String(threads), "-np", String(parallel), "-c", String(peerContextSize * parallel),
        "-b", "512", "-ub", "512", "-fa", "auto", "--jinja"
    ]);
    sides.push({name: "llama-server", url: peer.baseUrl, stop: () => peer.stop()});
}

const words = "the cat sat on a mat and looked at the dog who ran across the big green field".split(" ");
/** A system prompt no earlier run used (its first word is the run's). */
const systemPrompt = (salt: string) => [salt, ...Array.from({length: Number(args.words)}, (_, i) => words[(i * 7) % words.length])].join(" ");

/** One streamed request; when its first token and its end came, from `start`. */
async function stream(side: Side, body: Record<string, unknown>, start: number): Promise<{firstMs: number, endMs: number, cached: number}> {
    const response = await fetch(`${side.url}/v1/chat/completions`, {
        method: "POST", headers: {"Content-Type": "application/json"}, signal: AbortSignal.timeout(600_000),
        body: JSON.stringify({model: "bench", max_tokens: 8, temperature: 0, stream: true, stream_options: {include_usage: true}, ...body})
    });
    if (!response.ok)
        throw new Error(`${side.name}: ${response.status} ${await response.text()}`);
    let firstMs = NaN;
    let cached = 0;
    for await (const event of readSseEvents(response.body!)) {
        if (event.data === "[DONE]")
            break;
        const chunk = event.data as {choices?: {delta?: {content?: string}}[], usage?: {prompt_tokens_details?: {cached_tokens?: number}}};
        if (Number.isNaN(firstMs) && chunk.choices?.some((choice) => (choice.delta?.content ?? "") !== ""))
            firstMs = performance.now() - start;
        cached = chunk.usage?.prompt_tokens_details?.cached_tokens ?? cached;
    }
    return {firstMs, endMs: performance.now() - start, cached};
}

type Case = {name: string, peer: boolean, run: (side: Side, salt: string) => Promise<{firstMs: number, endMs: number, cached: number[]}>};
const together = (count: number): Case => ({
    name: `${count} requests together, one new system prompt`, peer: true,
    run: async (side, salt) => {
        const start = performance.now();
        const system = systemPrompt(salt);
        const results = await Promise.all(Array.from({length: count}, (_, index) =>
            stream(side, {messages: [{role: "system", content: system}, {role: "user", content: `question ${index}`}]}, start)));
        return {firstMs: Math.max(...results.map((result) => result.firstMs)), endMs: Math.max(...results.map((result) => result.endMs)), cached: results.map((result) => result.cached)};
    }
});
const cases: Case[] = [together(2), together(4), {
    name: "one request, n = 2, a new prompt", peer: false,
    run: async (side, salt) => {
        const start = performance.now();
        const result = await stream(side, {n: 2, messages: [{role: "system", content: systemPrompt(salt)}, {role: "user", content: "question"}]}, start);
        return {firstMs: result.firstMs, endMs: result.endMs, cached: [result.cached]};
    }
}];

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const results = new Map<string, {first: number[], end: number[], cached: number[][]}>();
try {
    for (let run = 0; run < runs; run++) {
        for (const testCase of cases) {
            const order = run % 2 === 0 ? sides : [...sides].reverse();
            for (const side of order) {
                if (side.name !== "ours" && !testCase.peer)
                    continue;
                const result = await testCase.run(side, `run${run}-${cases.indexOf(testCase)}-${side.name}`);
                const key = `${testCase.name}|${side.name}`;
                const entry = results.get(key) ?? {first: [], end: [], cached: []};
                entry.first.push(result.firstMs);
                entry.end.push(result.endMs);
                entry.cached.push(result.cached);
                results.set(key, entry);
            }
        }
    }
    console.log(`\n56 MB model, threads ${threads}, ${parallel} sequences/slots, system prompt of ${args.words} words, ${runs} runs (medians, ms)\n`);
    console.log("| case | side | last first token | last end | cached tokens per request (first run) | llama-server's time / ours (end) |\n|---|---|---|---|---|---|");
    for (const testCase of cases) {
        const peer = results.get(`${testCase.name}|llama-server`);
        for (const side of sides) {
            const entry = results.get(`${testCase.name}|${side.name}`);
            if (entry == null)
                continue;
            const ratio = side.name === "ours" && peer != null ? (median(peer.end) / median(entry.end)).toFixed(2) : "";
            console.log(`| ${testCase.name} | ${side.name} | ${median(entry.first).toFixed(0)} | ${median(entry.end).toFixed(0)} | ${entry.cached[0].join(", ")} | ${ratio} |`);
        }
    }
} finally {
    for (const side of sides)
        await side.stop();
}
