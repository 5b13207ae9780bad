import fs from "node:fs";
import path from "node:path";
import OpenAI from "openai";
import { BenchServer } from "./serverClient.js";

/**
 * The server of an ONNX benchmark: `models` written as the manifest in `dir` (a temporary folder the caller removes),
 * the worker pool sized `workers` x `onnxThreads`, chat on one thread with two sequences, no keys; and an `openai` client.
 */
export async function startOnnxBenchServer(dir: string, models: Record<string, unknown>[], pool: {workers: number, onnxThreads: number, startTimeoutMs: number}) {
    const manifest = path.join(dir, "models.json");
    fs.writeFileSync(manifest, JSON.stringify({models}));
    process.env.WORKERS = String(pool.workers);
    process.env.ONNX_THREADS = String(pool.onnxThreads);
    const server = await BenchServer.start({
        cwd: process.cwd(), manifestPath: manifest, keysFile: path.join(dir, "no-keys.json"), threads: 1, parallel: 2, startTimeoutMs: pool.startTimeoutMs
    });
    return {server, client: new OpenAI({baseURL: `${server.baseUrl}/v1`, apiKey: "none", maxRetries: 0})};
}
