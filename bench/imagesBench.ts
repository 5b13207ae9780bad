/**
 * `npm run bench:images [-- --quick]`: seconds per denoising step of a generated Stable Diffusion folder
 * (test/support/onnx/makeTestSdModel.ts with 3x3 convolutions in its UNet) called directly (its UNet session in a plain loop, in this
 * process) versus through the server (HTTP, worker pool, sampler, progress messages), for n = 1 and 4,
 * with and without streamed previews; the process's memory; and chat time-to-first-token while images
 * generate versus idle.
 *
 * Per-step figures are slopes: (time at S2 steps - time at S1 steps) / (S2 - S1), medians of the runs,
 * so the fixed costs of a request (text encoder, VAE, PNG encoding, HTTP) cancel out on both sides.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import OpenAI from "openai";
import { generateImages } from "../src/capabilities/images/onnx/generateImages.js";
import { loadSdPipeline } from "../src/capabilities/images/onnx/loadSdPipeline.js";
import type { TaskContext } from "../src/core/workers/WorkerTask.js";
import { defaultConfig } from "../src/config.js";
import { createLogger } from "../src/logger.js";
import { OnnxSession } from "../src/runtimes/onnx/OnnxSession.js";
import { startServer } from "../src/startServer.js";
import { makeTestLlamaGguf } from "../test/support/gguf/makeTestLlamaGguf.js";
import { makeTestSdModel } from "../test/support/onnx/makeTestSdModel.js";
import { chatTtft } from "./chatTtft.js";

const quick = process.argv.includes("--quick");
const runs = quick ? 3 : 7;
// 4 and 16 steps: also the `quality` low/high of the grid model below (its default 8 halved and doubled).
const [fewSteps, manySteps] = [4, 16];
const size = 128;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "images-bench-"));
const sdPath = path.join(dir, "sd");
const chatPath = path.join(dir, "chat.gguf");
// The test model's UNet is a single 1x1 convolution by default; a step of a real UNet costs far more than the
// server's per-step work, so this one gets 3x3 convolutions (bench/imagesDirect.ts's makeBenchSdModel does the same
// at 512 px, too slow for the n = 4 runs here on 2 shared cores).
const convChannels = [256, 256, 256];
makeTestSdModel(sdPath, {seed: 1, convChannels});
await makeTestLlamaGguf(chatPath, {seed: 1});
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
/** Wall and CPU milliseconds (every thread of this process: main, pool workers, ONNX Runtime) of one run. */
type Cost = {wall: number, cpu: number};
async function measure(run: () => Promise<unknown>): Promise<Cost> {
    const cpu = process.cpuUsage();
    const started = performance.now();
    await run();
    const used = process.cpuUsage(cpu);
    return {wall: performance.now() - started, cpu: (used.user + used.system) / 1000};
}

/**
 * Per-step slopes (wall and CPU) of each variant, measured interleaved (run r of every variant before run r + 1
 * of any), so load from other processes on the machine falls on all of them alike. Medians of `runs`. CPU time
 * is the steadier figure on a shared machine: another process's load lengthens the wall time, not our CPU time.
 */
async function slopes(variants: Record<string, (steps: number) => Promise<unknown>>): Promise<Record<string, Cost>> {
    const perStep: Record<string, Cost[]> = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
    for (const run of Object.values(variants))
        await run(fewSteps);
    for (let round = 0; round < runs; round++)
        for (const [name, run] of Object.entries(variants)) {
            const few = await measure(() => run(fewSteps));
            const many = await measure(() => run(manySteps));
            perStep[name].push({wall: (many.wall - few.wall) / (manySteps - fewSteps), cpu: (many.cpu - few.cpu) / (manySteps - fewSteps)});
        }
    return Object.fromEntries(Object.entries(perStep).map(([name, costs]) =>
        [name, {wall: median(costs.map((cost) => cost.wall)), cpu: median(costs.map((cost) => cost.cpu))}]));
}

// Direct: the UNet session in a plain loop, with the rows the pipeline feeds it (classifier-free guidance: 2 per image).
const pipeline = await loadSdPipeline({key: "direct", folder: sdPath, threads: defaultConfig.onnxThreads, previewDecoder: null});
const {unet, io} = pipeline;
const latent = size / 8;
const textDims = io.encoderHiddenStates.shape.slice(1).map((dim) => typeof dim === "number" ? dim : 77);
async function directLoop(images: number, steps: number) {
    const rows = 2 * images;
    const sample = new Float32Array(rows * 4 * latent * latent).map((_, index) => Math.sin(index));
    const text = new Float32Array(rows * textDims.reduce((a, b) => a * b, 1)).fill(0.1);
    const timestepDims = io.timestep.shape.length === 0 ? [] : [typeof io.timestep.shape[0] === "number" ? io.timestep.shape[0] : rows];
    const started = performance.now();
    for (let step = 0; step < steps; step++) {
        const output = await unet.run({
            [io.sample.name]: unet.tensor(io.sample, sample, [rows, 4, latent, latent]),
            [io.timestep.name]: unet.tensor(io.timestep, new Array<number>(timestepDims[0] ?? 1).fill(999 - step * 40), timestepDims),
            [io.encoderHiddenStates.name]: unet.tensor(io.encoderHiddenStates, text, [rows, ...textDims])
        });
        OnnxSession.floats(output[io.unetOutput]);
    }
    return performance.now() - started;
}

/** The whole pipeline in this process (text encoder, sampler loop, VAE), no pool or HTTP: what the server adds is the rest. */
const quietContext: TaskContext = {cancelled: false, throwIfCancelled() {}, progress() {}};
async function inProcess(images: number, steps: number) {
    const started = performance.now();
    await generateImages(pipeline, {prompt: "a photo of a cat", negativePrompt: "", width: size, height: size, steps, sampler: "Euler",
        guidanceScale: 7, seeds: Array.from({length: images}, (_, index) => 1 + index), previews: 0}, quietContext);
    return performance.now() - started;
}

const manifest = path.join(dir, "models.json");
fs.writeFileSync(manifest, JSON.stringify({models: [
    {id: "sd", task: "image", path: sdPath, defaults: {sampler: "Euler", guidanceScale: 7}},
    {id: "sd-grid", task: "image", path: sdPath, parameterSet: "midjourney", defaults: {sampler: "Euler", guidanceScale: 7, steps: 8, size: `${size}x${size}`}},
    {id: "chat", task: "chat", path: chatPath, contextSize: 512, parallel: 2}
]}));
const server = await startServer({...defaultConfig, port: 0, modelsConfig: manifest, apiKeysFile: path.join(dir, "keys.json"), logLevel: "error"}, createLogger("error"));
await server.ready;
const client = new OpenAI({baseURL: `${server.url}/v1`, apiKey: "none", maxRetries: 0});
const post = (body: Record<string, unknown>) => fetch(`${server.url}/v1/images/generations`, {
    method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)
});

/** Wall time of one request through the server, read to its end. */
async function serverRequest(body: Record<string, unknown>) {
    const started = performance.now();
    const response = await post(body);
    if (response.status !== 200)
        throw new Error(`${response.status}: ${await response.text()}`);
    await response.arrayBuffer();
    return performance.now() - started;
}

const request = {model: "sd", prompt: "a photo of a cat", size: `${size}x${size}`, seed: 1};
const figures: {label: string, direct: Cost, pipeline: Cost, server: Cost}[] = [];
// n = 4 can stream only as a MidJourney-style grid (one engine call with four seeds), its steps set through `quality`.
const quality = (steps: number) => steps === fewSteps ? "low" : "high";
const grid = {model: "sd-grid", prompt: "a photo of a cat"};
for (const n of [1, 4]) {
    const measured = await slopes({
        direct: (steps) => directLoop(n, steps),
        pipeline: (steps) => inProcess(n, steps),
        plain: (steps) => serverRequest({...request, n, steps}),
        ...(n === 1
            ? {streamed: (steps: number) => serverRequest({...request, steps, stream: true, partial_images: 3})}
            : {
                grid: (steps: number) => serverRequest({...grid, quality: quality(steps)}),
                streamedGrid: (steps: number) => serverRequest({...grid, quality: quality(steps), stream: true, partial_images: 3})
            })
    });
    const row = (label: string, server: Cost) => figures.push({label, direct: measured.direct, pipeline: measured.pipeline, server});
    row(`n = ${n}, no previews`, measured.plain);
    if (n === 1)
        row("n = 1, streamed, 3 previews", measured.streamed);
    else {
        row("n = 4 as a 2x2 grid, not streamed", measured.grid);
        row("n = 4 as a 2x2 grid, streamed, 3 partial grids", measured.streamedGrid);
    }
}
const rss = process.memoryUsage().rss;
const peak = process.resourceUsage().maxRSS * 1024;

const ttft = () => chatTtft(client);
const idle: number[] = [];
for (let i = 0; i < 10; i++) idle.push(await ttft());
let generating = true;
const load = (async () => {
    while (generating) await serverRequest({...request, n: 4, steps: manySteps});
})();
await new Promise((resolve) => setTimeout(resolve, 200));
const busy: number[] = [];
for (let i = 0; i < 10; i++) busy.push(await ttft());
generating = false;
await load;

console.log(`Generated SD folder, UNet with 3x3 convolutions of ${convChannels.join("/")} channels, ${size}x${size} images (latents ${latent}x${latent}), ${os.cpus().length} cores, pool ${defaultConfig.workers} workers x ${defaultConfig.onnxThreads} ONNX thread(s); per-step slopes ${fewSteps}->${manySteps} steps, median of ${runs} interleaved runs`);
const cell = (cost: Cost) => `${cost.wall.toFixed(1)} / ${cost.cpu.toFixed(1)}`;
console.log("ms per step, wall / CPU (all threads)\n| | direct UNet loop | pipeline in-process | server | server/direct, wall / CPU |\n|---|---|---|---|---|");
for (const {label, direct, pipeline: inProcessStep, server: through} of figures)
    console.log(`| ${label} | ${cell(direct)} | ${cell(inProcessStep)} | ${cell(through)} | ${(through.wall / direct.wall).toFixed(2)} / ${(through.cpu / direct.cpu).toFixed(2)} |`);
console.log(`memory: server process RSS ${(rss / 2 ** 20).toFixed(0)} MiB (peak ${(peak / 2 ** 20).toFixed(0)} MiB), including the direct pipeline's sessions`);
console.log(`chat TTFT ms (median of 10): idle ${median(idle).toFixed(1)}, while n=4 images generate ${median(busy).toFixed(1)} (${(median(busy) / median(idle)).toFixed(2)}x)`);
await server.close();
fs.rmSync(dir, {recursive: true, force: true});
