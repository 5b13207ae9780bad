/**
 * `npm run bench:unload-memory`: does unloading a model give its memory back? Generates a ~64 MB ONNX embeddings
 * model and a ~75 MB GGUF chat model into a temporary folder, serves them in-process with keep-alive 0 (a model
 * is unloaded as soon as it is idle), and prints the process' resident memory before the load, after a request,
 * and after the unload, for each. Figures: docs/models.md "Unloading gives the memory back".
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { makeTestLlamaGguf } from "../test/support/gguf/makeTestLlamaGguf.js";
import { makeTestBertOnnx } from "../test/support/onnx/makeTestBertOnnx.js";
import { startTestServer } from "../test/support/startTestServer.js";
import { tinyChatModelPath } from "../test/support/testModels.js";

const mb = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MB`;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "los-unload-"));
try {
    makeTestBertOnnx(path.join(dir, "bert"), {seed: 1, hiddenSize: 4096, maxPositions: 64});
    await makeTestLlamaGguf(path.join(dir, "chat.gguf"), {seed: 3, nEmbd: 384, nLayers: 8, nHeads: 6, nKvHeads: 6, nFf: 1536});
    const server = await startTestServer({
        models: [
            // Preloaded and kept: the llama.cpp runtime and the worker pool are in place before anything is measured.
            {id: "warm-chat", task: "chat", path: tinyChatModelPath, contextSize: 256, parallel: 1, preload: true, keepAlive: "forever"},
            {id: "bert", task: "embeddings", path: path.join(dir, "bert"), keepAlive: 0},
            {id: "chat", task: "chat", path: path.join(dir, "chat.gguf"), contextSize: 512, parallel: 1, keepAlive: 0}
        ],
        config: {preloadAll: false}
    });
    try {
        // Warm the worker pool with a first load and unload of the ONNX model, so the measured round is the model alone.
        const status = async (id: string) => (await (await fetch(`${server.url}/v1/models/${id}`)).json() as {status: {value: string, estimated_bytes: number}}).status;
        const untilUnloaded = async (id: string) => {
            while ((await status(id)).value !== "unloaded")
                await new Promise((resolve) => setTimeout(resolve, 50));
        };
        const requests: Record<string, () => Promise<Response>> = {
            bert: () => server.post("/v1/embeddings", {model: "bert", input: "hello world"}),
            chat: () => server.post("/v1/chat/completions", {model: "chat", max_tokens: 4, messages: [{role: "user", content: "hi"}]})
        };
        await requests.bert();
        await untilUnloaded("bert");
        for (const id of ["bert", "chat"]) {
            global.gc?.();
            const before = process.memoryUsage.rss();
            const response = await requests[id]();
            if (response.status !== 200)
                throw new Error(`${id}: ${response.status} ${await response.text()}`);
            const loaded = process.memoryUsage.rss();
            const {estimated_bytes: estimate} = await status(id);
            await untilUnloaded(id);
            global.gc?.();
            const after = process.memoryUsage.rss();
            console.log(`${id}: estimate ${mb(estimate)}; rss before ${mb(before)}, loaded and used ${mb(loaded)} (+${mb(loaded - before)}), after unload ${mb(after)} (${mb(after - before)} above before)`);
        }
    } finally {
        await server.stop();
    }
} finally {
    fs.rmSync(dir, {recursive: true, force: true});
}
