/**
 * `npm run bench:embeddings [-- --quick] [--workers N] [--onnx-threads N]`: texts/s of transformers.js called directly in this process
 * versus through the server (HTTP + worker pool), batch sizes 1, 32 and 256, side by side in one run;
 * then chat time-to-first-token with and without an embeddings load running.
 * Models: a generated random-weight BERT-like ONNX model (hidden 384) and the generated tiny chat GGUF.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { AutoModel, AutoTokenizer, env, Tensor } from "@huggingface/transformers";
import OpenAI from "openai";
import { defaultConfig } from "../src/config.js";
import { finishVector, poolHiddenStates } from "../src/capabilities/embeddings/onnx/pooling.js";
import { createLogger } from "../src/logger.js";
import { startServer } from "../src/startServer.js";
import { makeTestLlamaGguf } from "../test/support/gguf/makeTestLlamaGguf.js";
import { makeTestBertOnnx } from "../test/support/onnx/makeTestBertOnnx.js";

const quick = process.argv.includes("--quick");
/** `--name N` from the command line, else the server's default. */
const flag = (name: string, fallback: number) => {
    const at = process.argv.indexOf(`--${name}`);
    return at === -1 ? fallback : Number(process.argv[at + 1]);
};
const workers = flag("workers", defaultConfig.workers);
const onnxThreads = flag("onnx-threads", defaultConfig.onnxThreads);
const seconds = quick ? 1.5 : 5;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "embed-bench-"));
const bertPath = path.join(dir, "bert");
const chatPath = path.join(dir, "chat.gguf");
makeTestBertOnnx(bertPath, {hiddenSize: 384, maxPositions: 512});
await makeTestLlamaGguf(chatPath, {seed: 1});
const texts = Array.from({length: 256}, (_, index) => `the quick brown fox ${index} jumps over the lazy dog ${"once upon a time ".repeat(index % 8)}`);

env.allowRemoteModels = false;
const tokenizer = await AutoTokenizer.from_pretrained(bertPath);
const model = await AutoModel.from_pretrained(bertPath, {dtype: "fp32", session_options: {intraOpNumThreads: 1, interOpNumThreads: 1, extra: {session: {intra_op: {allow_spinning: "0"}}}}});
async function direct(batch: string[]) {
    const encoded = tokenizer(batch, {padding: true});
    const output = await model({input_ids: encoded.input_ids, attention_mask: encoded.attention_mask, token_type_ids: encoded.token_type_ids}) as Record<string, Tensor>;
    const lengths = (encoded.attention_mask.tolist() as bigint[][]).map((row) => row.filter((value) => value === 1n).length);
    return poolHiddenStates(output.last_hidden_state.data as Float32Array, output.last_hidden_state.dims, lengths, "mean").map((vector) => finishVector(vector, {normalize: true}));
}

const manifest = path.join(dir, "models.json");
fs.writeFileSync(manifest, JSON.stringify({models: [
    {id: "bert", task: "embeddings", path: bertPath},
    {id: "chat", task: "chat", path: chatPath, contextSize: 512, parallel: 2}
]}));
const server = await startServer({...defaultConfig, workers, onnxThreads, port: 0, modelsConfig: manifest, apiKeysFile: path.join(dir, "keys.json"), logLevel: "error"}, createLogger("error"));
await server.ready;
const client = new OpenAI({baseURL: `${server.url}/v1`, apiKey: "none", maxRetries: 0});

/** Texts per second: `concurrency` loops sending batches of `size` for `seconds`. */
async function throughput(run: (batch: string[]) => Promise<unknown>, size: number, concurrency: number) {
    const batch = texts.slice(0, size);
    await run(batch);
    let done = 0;
    const end = performance.now() + seconds * 1000;
    const started = performance.now();
    await Promise.all(Array.from({length: concurrency}, async () => {
        while (performance.now() < end) {
            await run(batch);
            done += size;
        }
    }));
    return done / ((performance.now() - started) / 1000);
}

const rows: string[] = [];
for (const size of [1, 32, 256]) {
    // The server gets 2 concurrent requests so both workers are busy; direct runs one at a time in-process.
    const directRate = await throughput(direct, size, 1);
    const serverRate = await throughput((batch) => client.embeddings.create({model: "bert", input: batch}), size, size === 256 ? 1 : 2);
    rows.push(`| batch ${size} | ${directRate.toFixed(0)} | ${serverRate.toFixed(0)} | ${(serverRate / directRate).toFixed(2)} |`);
}

async function ttft() {
    const started = performance.now();
    const stream = await client.chat.completions.create({model: "chat", messages: [{role: "user", content: "hi"}], max_tokens: 16, stream: true, temperature: 0});
    let first = 0;
    let chunks = 0;
    for await (const chunk of stream) {
        if ((chunk.choices[0]?.delta?.content ?? "") !== "" && first === 0)
            first = performance.now() - started;
        chunks++;
    }
    return {first, total: performance.now() - started, chunks};
}
const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
const idle: number[] = [];
for (let i = 0; i < 10; i++) idle.push((await ttft()).first);
let loading = true;
const load = (async () => {
    while (loading) await client.embeddings.create({model: "bert", input: texts});
})();
await new Promise((resolve) => setTimeout(resolve, 300));
const busy: number[] = [];
const busyTotal: number[] = [];
for (let i = 0; i < 10; i++) {
    const result = await ttft();
    busy.push(result.first);
    busyTotal.push(result.total);
}
loading = false;
await load;

console.log(`embeddings texts/s (generated BERT-like ONNX, hidden 384, ${os.cpus().length} cores, pool ${workers} workers x ${onnxThreads} thread(s))`);
console.log("| | transformers.js direct | server | server/direct |\n|---|---|---|---|");
console.log(rows.join("\n"));
console.log(`chat TTFT ms (median of 10): idle ${median(idle).toFixed(1)}, under embeddings load ${median(busy).toFixed(1)}; 16-token stream under load ${median(busyTotal).toFixed(1)} ms`);
await server.close();
fs.rmSync(dir, {recursive: true, force: true});
