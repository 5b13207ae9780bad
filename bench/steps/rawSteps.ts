// Same event timeline as decodeOverhead.ts, for node-llama-cpp driven directly (no server code in the loop).
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import { median } from "../stats.js";
import { testLlamaTokens } from "../../test/support/gguf/makeTestLlamaGguf.js";
import { TokenBias } from "node-llama-cpp";
const llama = await loadLlamaRuntime((process.env.LLAMA_BUILD ?? "auto") as "auto");
const model = await llama.loadModel({modelPath: new URL("../../.cache/peer-models/56mb.gguf", import.meta.url).pathname});
const context = await model.createContext({contextSize: 2048, sequences: 4, threads: 1, flashAttention: "auto"});
const native = (context as any)._ctx;
const events: [string, number][] = [];
(context as any)._ctx = new Proxy(native, {get(target, property) {
    const value = target[property];
    if (typeof value !== "function") return value;
    if (property === "decodeBatch" || property === "sampleToken") return (...a: unknown[]) => { events.push([String(property) + ":call", performance.now()]); const p = value.apply(target, a); p.then(() => events.push([String(property) + ":done", performance.now()])); return p; };
    return value.bind(target);
}});
const bias = new TokenBias(model.tokenizer);
for (let id = 0; id < testLlamaTokens.firstByte.id + 256; id++) bias.set(id as any, "never");
const sequence = context.getSequence();
const walls: number[] = [];
for (let r = 0; r < 3; r++) {
    await sequence.clearHistory();
    events.length = 0;
    let n = 0, first = NaN, last = NaN;
    for await (const token of sequence.evaluate(model.tokenize("Tell me a story " + r), {temperature: 0, tokenBias: bias})) {
        const now = performance.now(); events.push(["token", now]); if (n++ === 0) first = now; last = now;
        if (n >= 128) break;
    }
    walls.push((last - first) / (n - 1));
    if (r === 2) {
        const gaps = new Map<string, number[]>();
        for (let i = 1; i < events.length; i++) { const k = `${events[i - 1][0]} -> ${events[i][0]}`; gaps.set(k, [...gaps.get(k) ?? [], events[i][1] - events[i - 1][1]]); }
        for (const [k, v] of gaps) if (v.length > 10) console.log(k.padEnd(40), "n", v.length, "median", median(v).toFixed(3), "ms");
    }
}
console.log("raw: step wall", median(walls).toFixed(3), "ms");
