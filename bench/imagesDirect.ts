/**
 * The direct baseline for `npm run bench:images`: a Stable Diffusion folder's ONNX sessions called in a plain loop in
 * this process (no worker pool, no HTTP, no previews): tokenize and text-encode once, one UNet call per step on
 * [unconditional x n, conditional x n] (classifier-free guidance, as the server batches it), a plain Euler update,
 * then the VAE decoder once per image. The same sessions and options as the server's worker (OnnxSession), so the
 * difference to the server is the server's own overhead.
 *
 * Run alone: `tsx bench/imagesDirect.ts [--folder <sd folder>] [--steps 8] [--n 1,4] [--threads 2] [--size 512] [--engine]`
 * (`--engine`: also through OnnxImageEngine on a worker pool, with 0 and 3 previews); without
 * `--folder` it generates a mid-sized random-weight UNet (`makeBenchSdModel`) in a temporary folder.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { encodePrompt } from "../src/capabilities/images/onnx/encodePrompt.js";
import { loadSdPipeline } from "../src/capabilities/images/onnx/loadSdPipeline.js";
import { OnnxSession } from "../src/runtimes/onnx/OnnxSession.js";
import { samplingPlan } from "../src/capabilities/images/samplers/samplingPlan.js";
import { sigmaToTimestep } from "../src/capabilities/images/samplers/sigmaToTimestep.js";
import { makeTestSdModel } from "../test/support/onnx/makeTestSdModel.js";

export type DirectImageBenchOptions = {
    steps: number;
    /** Images per run, batched in each UNet call. */
    n: number;
    threads: number;
    /** Square side in pixels; default the folder's native size. */
    size?: number;
    guidanceScale?: number;
};

export type DirectImageBenchResult = {
    loadSeconds: number;
    textEncodeSeconds: number;
    /** Every UNet call, in order. */
    stepSeconds: number[];
    medianStepSeconds: number;
    vaeSeconds: number;
    totalSeconds: number;
    /** Resident set size after the run. */
    rssBytes: number;
};

/** Times one generation of `options.n` images on `folder` in a plain loop (see the file comment). */
export async function directImageBench(folder: string, options: DirectImageBenchOptions): Promise<DirectImageBenchResult> {
    let mark = performance.now();
    const lap = () => {
        const now = performance.now();
        const seconds = (now - mark) / 1000;
        mark = now;
        return seconds;
    };
    const pipeline = await loadSdPipeline({key: "bench", folder, threads: options.threads, previewDecoder: null});
    const loadSeconds = lap();
    const started = performance.now();
    const {describe, io, unet, textEncoder, vaeDecoder} = pipeline;
    const size = options.size ?? describe.nativeWidth;
    const latentSide = size / describe.vaeScaleFactor;
    const channels = describe.latentChannels;
    const perImage = channels * latentSide * latentSide;
    const guided = (options.guidanceScale ?? 7) > 1;
    const rows = guided ? 2 * options.n : options.n;

    const texts = guided ? [encodePrompt(pipeline, ""), encodePrompt(pipeline, "a photo of a cat")] : [encodePrompt(pipeline, "a photo of a cat")];
    const encoded = OnnxSession.floats((await textEncoder.run({
        [io.inputIds.name]: textEncoder.tensor(io.inputIds, texts.flatMap((text) => text.ids), [texts.length, describe.textWindow])
    }))[io.hiddenStates]);
    const textSize = encoded.length / texts.length;
    const conditioning = new Float32Array(textSize * rows);
    for (let row = 0; row < rows; row++)
        conditioning.set(encoded.subarray(Math.floor(row / options.n) * textSize, (Math.floor(row / options.n) + 1) * textSize), row * textSize);
    const textEncodeSeconds = lap();

    const plan = samplingPlan("Euler", options.steps, pipeline.schedule);
    let x = Float64Array.from({length: perImage * options.n}, (_, i) => Math.sin(i * 12.9898) * plan.sigmas[0]);
    const stepSeconds: number[] = [];
    const timestepDims = io.timestep.shape.length === 0 ? [] : io.timestep.shape[0] === 1 ? [1] : [rows];
    for (let i = 0; i < plan.steps; i++) {
        const sigma = plan.sigmas[i];
        const cIn = 1 / Math.sqrt(sigma * sigma + 1);
        const sample = new Float32Array(perImage * rows);
        for (let row = 0; row < rows; row++)
            for (let j = 0; j < perImage; j++)
                sample[row * perImage + j] = x[(row % options.n) * perImage + j] * cIn;
        const t = sigmaToTimestep(pipeline.schedule, sigma, {quantize: io.timestep.type.startsWith("int")});
        const output = OnnxSession.floats((await unet.run({
            [io.sample.name]: unet.tensor(io.sample, sample, [rows, channels, latentSide, latentSide]),
            [io.timestep.name]: unet.tensor(io.timestep, new Array<number>(timestepDims[0] ?? 1).fill(t), timestepDims),
            [io.encoderHiddenStates.name]: unet.tensor(io.encoderHiddenStates, conditioning, [rows, describe.textWindow, textSize / describe.textWindow])
        }))[io.unetOutput]);
        const next = new Float64Array(x.length);
        const offset = guided ? perImage * options.n : 0;
        const scale = options.guidanceScale ?? 7;
        for (let j = 0; j < x.length; j++) {
            const eps = guided ? output[j] + scale * (output[offset + j] - output[j]) : output[j];
            next[j] = x[j] + eps * (plan.sigmas[i + 1] - sigma);
        }
        x = next;
        stepSeconds.push(lap());
    }

    for (let image = 0; image < options.n; image++) {
        const latent = x.subarray(image * perImage, (image + 1) * perImage).map((value) => value / describe.scalingFactor);
        await vaeDecoder.run({[io.latentSample.name]: vaeDecoder.tensor(io.latentSample, latent, [1, channels, latentSide, latentSide])});
    }
    const vaeSeconds = lap();
    const totalSeconds = (performance.now() - started) / 1000;
    for (const session of [textEncoder, unet, vaeDecoder])
        await session.release();
    const sorted = [...stepSeconds].sort((a, b) => a - b);
    return {
        loadSeconds, textEncodeSeconds, stepSeconds, medianStepSeconds: sorted[Math.floor(sorted.length / 2)],
        vaeSeconds, totalSeconds, rssBytes: process.memoryUsage().rss
    };
}

/**
 * The same generation through the engine the server uses (OnnxImageEngine on a one-worker WorkerPool, Euler,
 * guidance 7, `previews` partial images per image), without HTTP: seconds per step from the step messages'
 * elapsed times, so it can be set beside `directImageBench` to see the pool's and the pipeline's own cost.
 */
export async function engineImageBench(folder: string, options: DirectImageBenchOptions & {previews?: number}): Promise<{medianStepSeconds: number, totalSeconds: number}> {
    const {WorkerPool} = await import("../src/core/workers/WorkerPool.js");
    const {OnnxImageEngine} = await import("../src/capabilities/images/onnx/OnnxImageEngine.js");
    const pool = new WorkerPool({workers: 1});
    try {
        const entry = {
            id: "bench", task: "image", path: folder, family: null, released: null, aliases: [], ownedBy: "bench", contextSize: null, threads: null, parallel: null,
            settings: {parameterSet: "stable-diffusion" as const, defaults: {steps: null, sampler: null, size: null, guidanceScale: null}, previewDecoder: null}
        };
        const engine = await OnnxImageEngine.load(pool, entry, {threads: options.threads, parallel: 1, queueSize: 1});
        const size = options.size ?? engine.nativeSize.width;
        const elapsed: number[] = [];
        const started = performance.now();
        await engine.generate({
            prompt: "a photo of a cat", negativePrompt: "", width: size, height: size, steps: options.steps, sampler: "Euler",
            guidanceScale: options.guidanceScale ?? 7, seeds: Array.from({length: options.n}, (_, i) => i + 1), previews: options.previews ?? 0
        }, {signal: new AbortController().signal, onProgress: (message) => message.type === "step" && elapsed.push(message.elapsedMs)});
        const totalSeconds = (performance.now() - started) / 1000;
        // Step 1 also holds the text encoding: per-step times from step 2 on.
        const steps = elapsed.slice(1).map((value, i) => (value - elapsed[i]) / 1000).sort((a, b) => a - b);
        await engine.dispose();
        return {medianStepSeconds: steps[Math.floor(steps.length / 2)] ?? elapsed[0] / 1000, totalSeconds};
    } finally {
        await pool.close();
    }
}

/**
 * A random-weight SD folder whose UNet costs about as much per step as it should for a benchmark to mean something
 * (step-dominated): 64x64 latents (512 px) through 3x3 convolutions of 128 and 256 channels, about 10 GFLOP per step
 * with guidance at n = 1. The text encoder and VAE stay tiny.
 */
export function makeBenchSdModel(folder: string, convChannels = [128, 256, 128]) {
    makeTestSdModel(folder, {seed: 7, latentSize: 64, convChannels});
}

if (process.argv[1] != null && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
    const flag = (name: string) => {
        const at = process.argv.indexOf(`--${name}`);
        return at === -1 ? null : process.argv[at + 1];
    };
    let folder = flag("folder");
    if (folder == null) {
        folder = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "sd-bench-")), "sd");
        makeBenchSdModel(folder);
    }
    const steps = Number(flag("steps") ?? 8);
    const threads = Number(flag("threads") ?? Math.max(1, Math.min(4, os.availableParallelism())));
    const size = flag("size") != null ? Number(flag("size")) : undefined;
    for (const n of (flag("n") ?? "1").split(",").map(Number)) {
        const result = await directImageBench(folder, {steps, n, threads, size});
        console.log(`direct n=${n} steps=${steps} threads=${threads}: ${result.medianStepSeconds.toFixed(3)} s/step (median), ` +
            `text ${(result.textEncodeSeconds * 1000).toFixed(0)} ms, VAE ${(result.vaeSeconds * 1000).toFixed(0)} ms, ` +
            `total ${result.totalSeconds.toFixed(2)} s, load ${result.loadSeconds.toFixed(2)} s, rss ${(result.rssBytes / 2 ** 20).toFixed(0)} MiB`);
        if (process.argv.includes("--engine"))
            for (const previews of [0, 3]) {
                const engine = await engineImageBench(folder, {steps, n, threads, size, previews});
                console.log(`engine n=${n} previews=${previews}: ${engine.medianStepSeconds.toFixed(3)} s/step (median), total ${engine.totalSeconds.toFixed(2)} s`);
            }
    }
}
