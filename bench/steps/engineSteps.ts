// `npm run bench:steps`: per decode step, native decodeBatch / sampleToken time (call to resolution) versus the gaps around them, in our engine (this file) and in node-llama-cpp driven directly (rawSteps.ts). Model: the bench:peer 56 MB model.
// Where a decode step's wall time goes: native decodeBatch and sampleToken (async native calls, timed
// from call to resolution) versus the wall time per token of the loop, for our engine and raw node-llama-cpp.
import { LlamaChatEngine } from "../../src/capabilities/chat/llama/LlamaChatEngine.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import type { ChatJob } from "../../src/capabilities/chat/ChatEngine.js";
import { makeTestLlamaGguf, testLlamaTokens } from "../../test/support/gguf/makeTestLlamaGguf.js";
import { median } from "../stats.js";
import fs from "node:fs";

const modelPath = new URL("../../.cache/peer-models/56mb.gguf", import.meta.url).pathname;
fs.mkdirSync(new URL("../../.cache/peer-models/", import.meta.url).pathname, {recursive: true});
if (!fs.existsSync(modelPath)) await makeTestLlamaGguf(modelPath, {nEmbd: 768, nLayers: 4, nHeads: 12, nKvHeads: 4, nFf: 2304, contextLength: 4096, seed: 11, weightStorage: "f16"});
const llama = await loadLlamaRuntime((process.env.LLAMA_BUILD ?? "auto") as "auto");
const tokens = Number(process.argv[2] ?? 128);
const runs = Number(process.argv[3] ?? 5);
const bias = new Map<number, number>();
for (let id = 0; id < testLlamaTokens.firstByte.id + 256; id++) bias.set(id, -100);

const engine = await LlamaChatEngine.load(llama, {id: "m", modelPath, contextSize: 2048, threads: 1, parallel: 4, queueSize: 4, promptCache: "off"});
const context = (engine as any).context;
const native = context._ctx;
const timed: Record<string, number[]> = {decodeBatch: [], sampleToken: []};
const events: [string, number][] = [];
(globalThis as any).__events = events;
context._ctx = new Proxy(native, {get(target, property) {
    const value = target[property];
    if (typeof value !== "function") return value;
    if (property in timed) return (...a: unknown[]) => { const t = performance.now(); events.push([String(property) + ":call", t]); const p = value.apply(target, a); p.then(() => { const now = performance.now(); events.push([String(property) + ":done", now]); timed[property as string].push(now - t); }); return p; };
    return value.bind(target);
}});
const job = (seed: number): ChatJob => ({turns: [{role: "user", content: "Tell me a story " + seed}], n: 1, maxTokens: tokens, stop: [], jsonObject: false, jsonSchema: null,
    sampling: {temperature: 0, topP: 1, seed, frequencyPenalty: 0, presencePenalty: 0, logitBias: bias}});
const report: Record<string, number[]> = {stepWall: [], decode: [], sample: []};
for (let r = 0; r < runs; r++) {
    timed.decodeBatch.length = 0; timed.sampleToken.length = 0;
    let first = NaN, last = NaN, count = 0;
    events.length = 0;
    await engine.submit(job(r), {signal: new AbortController().signal, onText: () => { const now = performance.now(); events.push(["text", now]); if (count++ === 0) first = now; last = now; }}).done;
    // Gaps between consecutive events, by transition, after the first token.
    const gaps = new Map<string, number[]>();
    const start = events.findIndex(([name]) => name === "text");
    for (let i = start + 1; i < events.length; i++) {
        const key = `${events[i - 1][0]} -> ${events[i][0]}`;
        gaps.set(key, [...gaps.get(key) ?? [], events[i][1] - events[i - 1][1]]);
    }
    if (r === runs - 1) for (const [key, values] of gaps) console.log(key.padEnd(40), "n", values.length, "median", median(values).toFixed(3), "ms");
    // Steps after the first token: decode of 1 token each.
    report.stepWall.push((last - first) / (count - 1));
    report.decode.push(median(timed.decodeBatch.slice(1)));
    report.sample.push(median(timed.sampleToken.slice(1)));
}
const m = (k: string) => median(report[k]).toFixed(3);
console.log(`engine: step wall ${m("stepWall")} ms, native decodeBatch ${m("decode")} ms, sampleToken ${m("sample")} ms (medians of ${runs} runs x ${tokens} tokens)`);
await engine.dispose();
