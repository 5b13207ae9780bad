/**
 * `npm run bench:vision [-- --quick] [--runs N] [--tokens N] [--workers N] [--onnx-threads N]`: the vision engine's
 * speed through the server (a child process, bench/serverClient.ts):
 *  - time to the first token and tokens/s of a streamed greedy answer of `--tokens` (64) tokens to a 512x512 PNG and a
 *    question, on a generated random-weight model of SmolVLM-256M-Instruct's size (test/support/onnx/smolVlmSizedNetworks.ts:
 *    its vision tower, pixel shuffle, connector and 30-layer decoder as matrix products of the real sizes, about 1 GB of
 *    fp32 weights, written once to the git-ignored .cache/bench-vision/), the first (loading) request apart;
 *  - chat time to the first token on a generated llama GGUF, idle and while vision requests run back to back (the
 *    main thread must stay free while the workers encode images and decode).
 * Random weights: the text is meaningless and runs to max_tokens; the figures are the cost of a model of that size, not
 * a real SmolVLM's answers. No peer runs SmolVLM's ONNX export (llama-server takes GGUF with an mmproj), so there is
 * no side-by-side column.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type OpenAI from "openai";
import sharp from "sharp";
import { defaultConfig } from "../src/config.js";
import { makeTestLlamaGguf } from "../test/support/gguf/makeTestLlamaGguf.js";
import { makeTestSmolVlmOnnx } from "../test/support/onnx/makeTestSmolVlmOnnx.js";
import { smolVlm256mShape } from "../test/support/onnx/smolVlmSizedNetworks.js";
import { chatTtft, chatTtftUnderLoad } from "./chatTtft.js";
import { startOnnxBenchServer } from "./onnxBenchServer.js";
import { fixed, median } from "./stats.js";

const quick = process.argv.includes("--quick");
const flag = (name: string, fallback: number) => {
    const at = process.argv.indexOf(`--${name}`);
    return at === -1 ? fallback : Number(process.argv[at + 1]);
};
const runs = flag("runs", quick ? 1 : 3);
const tokens = flag("tokens", 64);
const workers = flag("workers", defaultConfig.workers);
const onnxThreads = flag("onnx-threads", defaultConfig.onnxThreads);
const loadBefore = os.loadavg();

// The sized model, generated once (about a minute) and kept: the stamp names the shape it was made with.
const modelPath = path.resolve(".cache/bench-vision/smolvlm-256m-shaped");
const stamp = path.join(modelPath, "shape.json");
if (!fs.existsSync(stamp) || fs.readFileSync(stamp, "utf8") !== JSON.stringify(smolVlm256mShape)) {
    console.log(`writing the SmolVLM-256M-sized model to ${modelPath} ...`);
    fs.rmSync(modelPath, {recursive: true, force: true});
    makeTestSmolVlmOnnx(modelPath, {seed: 7, shape: smolVlm256mShape});
    fs.writeFileSync(stamp, JSON.stringify(smolVlm256mShape));
}
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vision-bench-"));
const chatPath = path.join(dir, "chat.gguf");
await makeTestLlamaGguf(chatPath, {seed: 1});
const {server, client} = await startOnnxBenchServer(dir, [
    {id: "smolvlm", task: "chat", path: modelPath},
    {id: "chat", task: "chat", path: chatPath, contextSize: 512, parallel: 2}
], {workers, onnxThreads, startTimeoutMs: 600_000});

// A 512x512 photo-like image: a smooth gradient with noise, as PNG.
const side = 512;
const pixels = Buffer.alloc(side * side * 3);
for (let i = 0; i < side * side; i++) {
    const x = i % side, y = Math.floor(i / side);
    pixels.set([(x / 2 + (i * 7919) % 31) & 255, (y / 2 + (i * 104729) % 29) & 255, ((x + y) / 4) & 255], i * 3);
}
const png = await sharp(pixels, {raw: {width: side, height: side, channels: 3}}).png().toBuffer();
const imageUrl = `data:image/png;base64,${png.toString("base64")}`;

type VisionRun = {totalMs: number, firstMs: number, tokensPerSecond: number, promptTokens: number, completionTokens: number};

/** One streamed greedy answer about the image: time to its first token, its decode rate after that, its usage. */
async function describe(): Promise<VisionRun> {
    const started = performance.now();
    const stream = await client.chat.completions.create({
        model: "smolvlm", max_tokens: tokens, temperature: 0, stream: true, stream_options: {include_usage: true},
        messages: [{role: "user", content: [{type: "image_url", image_url: {url: imageUrl}}, {type: "text", text: "Describe this image."}]}]
    });
    let first = 0;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
        if ((chunk.choices[0]?.delta?.content ?? "") !== "" && first === 0)
            first = performance.now();
        usage = chunk.usage ?? usage;
    }
    const ended = performance.now();
    const completion = usage?.completion_tokens ?? 0;
    return {totalMs: ended - started, firstMs: first - started, tokensPerSecond: (completion - 1) / ((ended - first) / 1000),
        promptTokens: usage?.prompt_tokens ?? 0, completionTokens: completion};
}

const cold = await describe();
const warm: VisionRun[] = [];
for (let run = 0; run < runs; run++)
    warm.push(await describe());

const samples = quick ? 5 : 10;
await chatTtft(client);
const {idle, busy, requests: during} = await chatTtftUnderLoad(client, server.baseUrl, {model: "smolvlm", streams: 1, samples, request: describe});
await server.stop();
fs.rmSync(dir, {recursive: true, force: true});
const loadAfter = os.loadavg();

console.log(`\nvision: A GENERATED RANDOM-WEIGHT MODEL OF SMOLVLM-256M'S SIZE (not the real model); ${os.cpus().length} cores, pool ${workers} workers x ${onnxThreads} thread(s); ` +
    `load average ${loadBefore.map((value) => value.toFixed(2)).join(" ")} before, ${loadAfter.map((value) => value.toFixed(2)).join(" ")} after`);
console.log(`one ${side}x${side} PNG and a question, greedy, ${tokens} tokens streamed; medians of ${runs} after a first request that loads the model`);
console.log("| request | prompt tokens | completion tokens | first token ms | tokens/s after it | total ms |\n|---|---|---|---|---|---|");
const row = (name: string, list: VisionRun[]) => console.log(`| ${name} | ${list[0].promptTokens} | ${list[0].completionTokens} | ${fixed(median(list.map((run) => run.firstMs)), 0)} | ` +
    `${fixed(median(list.map((run) => run.tokensPerSecond)), 1)} | ${fixed(median(list.map((run) => run.totalMs)), 0)} |`);
row("first (loads the model)", [cold]);
row("warm", warm);
console.log(`\nchat TTFT ms on a generated llama GGUF (median of ${samples}): idle ${fixed(median(idle), 1)}, while vision requests run back to back ` +
    `${fixed(median(busy), 1)} (${during} vision requests during the samples)`);
console.log("no peer: llama-server and Ollama do not run SmolVLM's ONNX export (they take a GGUF with an mmproj file)");
