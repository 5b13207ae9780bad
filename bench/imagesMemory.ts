/**
 * `npm run bench:images-memory`: the process's RSS with a Stable Diffusion folder loaded in the worker
 * pool, with 1 and 2 workers, when every worker may load the pipeline (the default) and when the
 * manifest pins it to one worker (`workers: 1`), after two generations at once (so both workers are
 * asked), and again after the engine is disposed (its sessions released in the workers).
 * Each configuration runs in a fresh process (`--one ...`) so the allocator's history does not carry over.
 *
 * Models: the tests' tiny folder (a few KB of weights) and a large generated one (default ~400 MB of
 * fp32 weights: a 8192-wide text encoder and two 2048-channel 3x3 convolutions in the UNet), written to
 * a temporary folder that is removed afterwards. `--hidden N --channels N` size the large one.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { OnnxImageEngine } from "../src/capabilities/images/onnx/OnnxImageEngine.js";
import type { ImageSettings } from "../src/capabilities/images/imagesManifest.js";
import type { ModelEntry } from "../src/core/registry/ModelEntry.js";
import { WorkerPool } from "../src/core/workers/WorkerPool.js";
import { makeTestSdModel } from "../test/support/onnx/makeTestSdModel.js";

const megabytes = (bytes: number) => Math.round(bytes / 1024 / 1024);

async function one(folder: string, poolWorkers: number, modelWorkers: number | undefined) {
    const pool = new WorkerPool({workers: poolWorkers});
    const entry: ModelEntry<ImageSettings> = {
        id: "memory", task: "image", path: folder, family: null, released: null, aliases: [], ownedBy: "bench",
        contextSize: null, threads: null, parallel: null,
        settings: {parameterSet: "stable-diffusion", defaults: {steps: null, sampler: null, size: null, guidanceScale: null}, previewDecoder: null}
    };
    const idle = process.memoryUsage().rss;
    const engine = await OnnxImageEngine.load(pool, entry, {threads: 1, parallel: 2, queueSize: 4, workers: modelWorkers});
    const job = {prompt: "a photo of a cat", negativePrompt: "", width: 64, height: 64, steps: 2, sampler: "Euler" as const, guidanceScale: 7, previews: 0};
    await Promise.all([1, 2].map((seed) => engine.generate({...job, seeds: [seed]}, {signal: new AbortController().signal})));
    const loaded = process.memoryUsage().rss;
    await engine.dispose();
    const disposed = process.memoryUsage().rss;
    await pool.close();
    process.stdout.write(JSON.stringify({idle, loaded, disposed}) + "\n");
}

const {values} = parseArgs({options: {one: {type: "string"}, hidden: {type: "string", default: "8192"}, channels: {type: "string", default: "2048"}}});
if (values.one != null) {
    const [folder, poolWorkers, modelWorkers] = values.one.split(",");
    await one(folder, Number(poolWorkers), modelWorkers === "all" ? undefined : Number(modelWorkers));
} else {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "los-bench-images-memory-"));
    try {
        const tiny = path.join(tmp, "tiny");
        const large = path.join(tmp, "large");
        makeTestSdModel(tiny);
        const channels = Number(values.channels);
        makeTestSdModel(large, {hiddenSize: Number(values.hidden), convChannels: [channels, channels]});
        const weights = (folder: string) => execFileSync("du", ["-sb", folder], {encoding: "utf8"}).split("\t")[0];
        console.log(`tiny: ${megabytes(Number(weights(tiny)))} MB on disk; large: ${megabytes(Number(weights(large)))} MB on disk`);
        console.log("model | pool workers | model loaded by | RSS idle | RSS after 2 generations at once | RSS after dispose (MB)");
        for (const [name, folder] of [["tiny", tiny], ["large", large]])
            for (const poolWorkers of [1, 2])
                for (const modelWorkers of poolWorkers === 1 ? ["all"] : ["all", "1"]) {
                    const out = execFileSync(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url), "--one", `${folder},${poolWorkers},${modelWorkers}`],
                        {cwd: root, encoding: "utf8"});
                    const {idle, loaded, disposed} = JSON.parse(out.trim().split("\n").at(-1)!);
                    console.log(`${name} | ${poolWorkers} | ${modelWorkers === "all" ? "every worker" : "1 worker (manifest workers: 1)"} | ${megabytes(idle)} | ${megabytes(loaded)} | ${megabytes(disposed)}`);
                }
    } finally {
        fs.rmSync(tmp, {recursive: true, force: true});
    }
}
