/**
 * `npm run bench:cache-agreement [-- <model.gguf> <seeds> <history words>]` with MODE=on|exact:
 * how often a prompt-cache hit gives the same output as a miss (same seed and parameters), greedy
 * and sampled, for a reused prefix (the sequence last held the conversation's previous turn) and a
 * whole reused prompt (the same request again). The model: a generated 256-wide F16 llama.
 */
import { LlamaChatEngine } from "../src/capabilities/chat/llama/LlamaChatEngine.js";
import { loadLlamaRuntime } from "../src/runtimes/llama/llamaRuntime.js";
import type { ChatJob, ChatTurn } from "../src/capabilities/chat/ChatEngine.js";
import { makeTestLlamaGguf } from "../test/support/gguf/makeTestLlamaGguf.js";

const modelPath = process.argv[2] || new URL("../.cache/cache-agreement.gguf", import.meta.url).pathname;
const seeds = Number(process.argv[3] ?? 20);
const historyWords = Number(process.argv[4] ?? 300);
(await import("node:fs")).mkdirSync(new URL("../.cache", import.meta.url).pathname, {recursive: true});
await makeTestLlamaGguf(modelPath, {nEmbd: 256, nLayers: 2, nHeads: 4, nKvHeads: 2, nFf: 512, contextLength: 4096, seed: 3, weightStorage: "f16"});
const llama = await loadLlamaRuntime({build: (process.env.LLAMA_BUILD ?? "auto") as "auto", gpu: "off"});
const options = {id: "m", modelPath, contextSize: 2048, threads: 1, parallel: 1, queueSize: 4};
const cold = await LlamaChatEngine.load(llama, {...options, promptCache: "off"});
const warm = await LlamaChatEngine.load(llama, {...options, promptCache: (process.env.MODE ?? "on") as "on"});
const words = "the cat sat on a mat and looked at the dog who ran across the big green field".split(" ");
const history = (n: number, salt: number) => Array.from({length: n}, (_, i) => words[(i * 7 + salt) % words.length]).join(" ");
const job = (turns: ChatTurn[], seed: number, temperature: number): ChatJob => ({
    turns, n: 1, maxTokens: 24, stop: [], jsonObject: false, jsonSchema: null,
    sampling: {temperature, topP: 1, seed, frequencyPenalty: 0, presencePenalty: 0, logitBias: new Map()}
});
const run = async (engine: LlamaChatEngine, j: ChatJob) => (await (await engine.submit(j, {signal: new AbortController().signal})).done)[0];
const counts: Record<string, {same: number, total: number}> = {};
const note = (key: string, same: boolean) => { (counts[key] ??= {same: 0, total: 0}).total++; if (same) counts[key].same++; };
for (let seed = 1; seed <= seeds; seed++) {
    const base: ChatTurn[] = [{role: "system", content: history(historyWords, seed)}, {role: "user", content: "first " + seed}];
    const follow: ChatTurn[] = [...base, {role: "assistant", content: "ok " + history(8, seed + 1)}, {role: "user", content: "second " + seed}];
    for (const temperature of [0, 0.9]) {
        const missText = (await run(cold, job(follow, seed, temperature))).text;
        // Prefix reused: the sequence last held `base` (other seed), then `follow` comes.
        await run(warm, job(base, seed + 1000, temperature));
        const prefixHit = await run(warm, job(follow, seed, temperature));
        if (!(prefixHit.cachedPromptTokens! > 0)) throw new Error("no prefix hit");
        // Whole prompt reused.
        const wholeHit = await run(warm, job(follow, seed, temperature));
        const key = temperature === 0 ? "greedy" : "sampled";
        note(`${key} prefix`, prefixHit.text === missText);
        note(`${key} whole`, wholeHit.text === missText);
    }
}
console.log(`PROMPT_CACHE=${process.env.MODE ?? "on"}, ${seeds} seeds, ${historyWords} words of history: identical outputs hit vs miss`, JSON.stringify(counts));
await cold.dispose(); await warm.dispose();
