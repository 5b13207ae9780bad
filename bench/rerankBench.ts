/**
 * `npm run bench:rerank [-- --quick] [--threads N] [--skip-peer] [--shape tiny|minilm]`: documents per second reranking 100 documents of ~200 tokens
 * against one query, through this server's /v1/rerank on a GGUF reranker (node-llama-cpp's ranking context) and on an
 * ONNX cross-encoder (transformers.js in the worker pool), and through llama.cpp's own llama-server `/v1/rerank` on the
 * same GGUF (built by `npm run bench:peer` into .cache/, from the llama.cpp node-llama-cpp ships), side by side in one run.
 * Models, generated: a small BERT reranker GGUF (`--shape tiny`, the default: hidden 128, 4 layers, rank pooling, f32: ~1 M
 * weights outside the embeddings, where each pair's fixed costs weigh most; `--shape minilm`: the smallest real rerankers'
 * shape, ms-marco-MiniLM-L-6-v2's hidden 384, 6 layers, 12 heads, feed-forward 1,536) and the test cross-encoder ONNX at
 * hidden 384 (an embedding layer, a dense layer and the head: far cheaper than transformer layers).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { defaultConfig } from "../src/config.js";
import { createLogger } from "../src/logger.js";
import { startServer } from "../src/startServer.js";
import { makeTestBertRerankerGguf } from "../test/support/gguf/makeTestBertRerankerGguf.js";
import { makeTestBertOnnx } from "../test/support/onnx/makeTestBertOnnx.js";
import { seededRandom } from "../test/support/seededRandom.js";
import { buildLlamaServer } from "./peer/buildLlamaServer.js";
import { LlamaServerProcess } from "./peer/LlamaServerProcess.js";
import { cacheDir, projectRoot } from "./peer/peerModels.js";

const quick = process.argv.includes("--quick");
const skipPeer = process.argv.includes("--skip-peer");
const flag = (name: string, fallback: number) => {
    const at = process.argv.indexOf(`--${name}`);
    return at === -1 ? fallback : Number(process.argv[at + 1]);
};
const threads = flag("threads", 2);
const shapeAt = process.argv.indexOf("--shape");
const shape = shapeAt === -1 ? "tiny" : process.argv[shapeAt + 1];
if (shape !== "tiny" && shape !== "minilm")
    throw new Error(`--shape is tiny or minilm, not ${shape}`);
const rounds = quick ? 2 : 5;
const documentCount = 100;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rerank-bench-"));
process.on("exit", () => fs.rmSync(dir, {recursive: true, force: true}));
const ggufPath = path.join(dir, "reranker.gguf");
const onnxPath = path.join(dir, "cross-encoder");
await makeTestBertRerankerGguf(ggufPath, shape === "tiny" ? {nEmbd: 128, nLayers: 4, nHeads: 4, nFf: 512, contextLength: 512}
    : {nEmbd: 384, nLayers: 6, nHeads: 12, nFf: 1536, contextLength: 512});
makeTestBertOnnx(onnxPath, {seed: 2, hiddenSize: 384, maxPositions: 512, crossEncoder: true});

// ~200 tokens each: words of the test vocabulary (one token each).
const words = ["the", "a", "once", "upon", "time", "there", "was", "little", "girl", "boy", "cat", "dog", "hello", "world",
    "quick", "brown", "fox", "jumps", "over", "lazy", "red", "ball", "park", "play", "sun", "moon", "tree", "house"];
const random = seededRandom(7);
const documents = Array.from({length: documentCount}, () => Array.from({length: 200}, () => words[Math.floor(random() * words.length)]).join(" "));
const query = "the quick brown fox jumps over the lazy dog";

console.log("models written; starting the server");
const manifest = path.join(dir, "models.json");
fs.writeFileSync(manifest, JSON.stringify({models: [
    {id: "gguf", task: "rerank", path: ggufPath, threads},
    {id: "onnx", task: "rerank", path: onnxPath}
]}));
const server = await startServer({...defaultConfig, gpu: "off", port: 0, modelsConfig: manifest, apiKeysFile: path.join(dir, "keys.json"),
    cacheDir: path.join(dir, "cache"), logLevel: "error", preloadAll: true}, createLogger("error"));

type Result = {index: number, relevance_score: number};
async function rerank(url: string, model: string): Promise<{seconds: number, results: Result[], tokens: number | undefined}> {
    const started = performance.now();
    const response = await fetch(`${url}/v1/rerank`, {method: "POST", headers: {"Content-Type": "application/json"},
        body: JSON.stringify({model, query, documents, top_n: documentCount})});
    const body = await response.json() as {results: Result[], usage?: {prompt_tokens?: number}};
    if (response.status !== 200)
        throw new Error(`${url} answered ${response.status}: ${JSON.stringify(body)}`);
    return {seconds: (performance.now() - started) / 1000, results: body.results, tokens: body.usage?.prompt_tokens};
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
async function measure(name: string, url: string, model: string) {
    console.log(`${name}: warming up`);
    await rerank(url, model);
    const times: number[] = [];
    let last;
    for (let round = 0; round < rounds; round++) {
        last = await rerank(url, model);
        times.push(last.seconds);
    }
    return {name, seconds: median(times), results: last!.results, tokens: last!.tokens};
}

const rows = [
    await measure(`ours, GGUF (node-llama-cpp, ${threads} threads)`, server.url, "gguf"),
    await measure(`ours, ONNX cross-encoder (${defaultConfig.workers} workers x ${defaultConfig.onnxThreads} thread)`, server.url, "onnx")
];
await server.close();

if (!skipPeer) {
    const binary = buildLlamaServer(projectRoot, cacheDir);
    const peer = await LlamaServerProcess.start(binary, ["-m", ggufPath, "--rerank", "-c", "2048", "-b", "2048", "-ub", "512",
        "-t", String(threads), "-tb", String(threads), "--no-webui"]);
    try {
        rows.push(await measure(`llama-server, GGUF (${threads} threads)`, peer.baseUrl, "reranker"));
        console.log(`llama-server: ${peer.commandLine}`);
    } finally {
        await peer.stop();
    }
    // The same GGUF ranks the documents in the same order on both (llama-server answers the raw logit, ours its sigmoid).
    const order = (results: Result[]) => results.map((result) => result.index).slice(0, 10).join(",");
    console.log(`top 10 on the GGUF: ours ${order(rows[0].results)}; llama-server ${order(rows[2].results)}`);
}

console.log(`\n${documentCount} documents of ~200 tokens (prompt tokens per request: ${rows[0].tokens}), GGUF shape ${shape}, median of ${rounds} requests, ${os.cpus().length} cores\n`);
console.log("| server, model | seconds per request | documents/s |\n|---|---|---|");
for (const row of rows)
    console.log(`| ${row.name} | ${row.seconds.toFixed(3)} | ${(documentCount / row.seconds).toFixed(1)} |`);
