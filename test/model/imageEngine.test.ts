import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Piscina } from "piscina";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OnnxImageEngine } from "../../src/capabilities/images/onnx/OnnxImageEngine.js";
import { loadClipTokenizer } from "../../src/capabilities/images/onnx/loadClipTokenizer.js";
import type { ImageJob, ImageProgress, ImagePreview, ImageResult } from "../../src/capabilities/images/ImageEngine.js";
import type { ImageSettings } from "../../src/capabilities/images/imagesManifest.js";
import { samplerNames } from "../../src/capabilities/images/samplers/samplerNames.js";
import { EngineDisposedError } from "../../src/core/engines/EngineDisposedError.js";
import { QueueFullError } from "../../src/core/engines/QueueFullError.js";
import type { ModelEntry } from "../../src/core/registry/ModelEntry.js";
import { TaskCancelledError } from "../../src/core/workers/TaskCancelledError.js";
import type { TaskContext } from "../../src/core/workers/WorkerTask.js";
import { WorkerPool } from "../../src/core/workers/WorkerPool.js";
import { imageTaskHandles } from "../../src/capabilities/images/onnx/imageTaskHandles.js";
import { makeTestSdModel, testSdTokenizer } from "../support/onnx/makeTestSdModel.js";
import { tinySdFloatTimestepPath, tinySdFp16Path, tinySdLcmPath, tinySdPath } from "../support/testModels.js";

const pools: WorkerPool[] = [];

function pool(workers = 1) {
    const created = new WorkerPool({workers});
    pools.push(created);
    return created;
}

function entry(folder: string, settings: Partial<ImageSettings> = {}): ModelEntry<ImageSettings> {
    return {
        id: path.basename(folder), task: "image", path: folder, family: null, released: null, aliases: [], ownedBy: "test",
        contextSize: null, threads: null, parallel: null,
        settings: {parameterSet: "stable-diffusion", defaults: {steps: null, sampler: null, size: null, guidanceScale: null}, previewDecoder: null, ...settings}
    };
}

function load(workers: WorkerPool, folder: string, settings: Partial<ImageSettings> = {}, options: {parallel?: number, queueSize?: number, maxUnetBatch?: number, workers?: number} = {}) {
    return OnnxImageEngine.load(workers, entry(folder, settings), {threads: 1, parallel: options.parallel ?? 1, queueSize: options.queueSize ?? 4, maxUnetBatch: options.maxUnetBatch, workers: options.workers});
}

const baseJob: ImageJob = {
    prompt: "a photo of a cat", negativePrompt: "", width: 64, height: 64, steps: 4, sampler: "Euler",
    guidanceScale: 7, seeds: [1], previews: 0
};

function job(overrides: Partial<ImageJob> = {}): ImageJob {
    return {...baseJob, ...overrides};
}

function run(engine: OnnxImageEngine, overrides: Partial<ImageJob> = {}, onProgress?: (progress: ImageProgress) => void): Promise<ImageResult> {
    return engine.generate(job(overrides), {signal: new AbortController().signal, onProgress});
}

function bytesOf(result: ImageResult, index = 0) {
    return Buffer.from(result.images[index].rgb);
}

/** Mean absolute difference of two RGB byte arrays. */
function meanDifference(a: Uint8Array, b: Uint8Array) {
    let sum = 0;
    for (let i = 0; i < a.length; i++)
        sum += Math.abs(a[i] - b[i]);
    return sum / a.length;
}

let workers: WorkerPool;
let engine: OnnxImageEngine;

beforeAll(async () => {
    workers = pool(1);
    engine = await load(workers, tinySdPath);
});

afterAll(async () => {
    await Promise.all(pools.splice(0).map((created) => created.close()));
});

describe("OnnxImageEngine on a tiny random-weight Stable Diffusion folder", () => {
    it("reads the native size, size bounds and text window from the folder", async () => {
        expect(engine.nativeSize).toEqual({width: 64, height: 64});
        expect(engine.sizeBounds).toEqual({min: 64, max: 128, multiple: 8});
        expect(engine.maxPromptTokens).toBe(77);
        expect(engine.describe()).toMatchObject({size: "64x64", scalingFactor: 0.18215, textWindow: 77, predictionType: "epsilon"});
    });

    it("returns RGB images of the requested size that are not flat", async () => {
        // 64x72 has a 9-pixel latent side: the UNet (which needs multiples of 8, as real ones) gets it padded.
        for (const [width, height] of [[64, 64], [128, 64], [64, 72]]) {
            const result = await run(engine, {width, height, seeds: [5]});
            expect(result.images).toHaveLength(1);
            const [image] = result.images;
            expect(image).toMatchObject({seed: 5, width, height});
            expect(image.rgb.length).toBe(width * height * 3);
            expect(new Set(image.rgb).size).toBeGreaterThan(20);
        }
    });

    it("rejects a size outside the bounds and malformed jobs before they reach a worker", async () => {
        await expect(run(engine, {width: 136, height: 64})).rejects.toThrow("outside 64..128");
        await expect(run(engine, {width: 60, height: 64})).rejects.toThrow("outside 64..128");
        await expect(run(engine, {seeds: [-1]})).rejects.toThrow("seeds must be");
        await expect(run(engine, {seeds: [1.5]})).rejects.toThrow("seeds must be");
        await expect(run(engine, {steps: 0})).rejects.toThrow("steps must be");
        await expect(run(engine, {guidanceScale: NaN})).rejects.toThrow("guidanceScale");
        expect(engine.load()).toEqual({parallel: 1, busy: 0, waiting: 0});
    });

    it("gives the same bytes for the same seed, also in a new pool (a restart), and different bytes for other seeds", async () => {
        const first = await run(engine, {seeds: [42], sampler: "Euler a"});
        const again = await run(engine, {seeds: [42], sampler: "Euler a"});
        const restarted = await load(pool(1), tinySdPath);
        const afterRestart = await run(restarted, {seeds: [42], sampler: "Euler a"});
        expect(bytesOf(again).equals(bytesOf(first))).toBe(true);
        expect(bytesOf(afterRestart).equals(bytesOf(first))).toBe(true);

        const two = await run(engine, {seeds: [42, 43], sampler: "Euler a"});
        expect(two.images.map((image) => image.seed)).toEqual([42, 43]);
        expect(bytesOf(two, 0).equals(bytesOf(two, 1))).toBe(false);
        expect(meanDifference(two.images[0].rgb, two.images[1].rgb)).toBeGreaterThan(1);
    });

    it("batches n images in one run (or maxUnetBatch-row runs) with exactly the bytes of n single runs with the same seeds", async () => {
        const chunkedEngine = await load(workers, tinySdPath, {}, {maxUnetBatch: 4});
        for (const sampler of ["DPM++ 2M Karras", "DPM++ SDE Karras"] as const) {
            const batched = await run(engine, {seeds: [7, 8, 9], sampler, negativePrompt: "blurry"});
            // The same job with at most 4 UNet rows per run (6 rows: two runs of 4 and 2).
            const chunked = await run(chunkedEngine, {seeds: [7, 8, 9], sampler, negativePrompt: "blurry"});
            for (const [index, seed] of [7, 8, 9].entries()) {
                const single = await run(engine, {seeds: [seed], sampler, negativePrompt: "blurry"});
                expect(bytesOf(batched, index).equals(bytesOf(single))).toBe(true);
                expect(bytesOf(chunked, index).equals(bytesOf(single))).toBe(true);
            }
        }
    });

    it("runs every sampler to a valid image, and each gives a different one", async () => {
        const images = new Map<string, Buffer>();
        for (const sampler of samplerNames) {
            const result = await run(engine, {sampler, steps: 5, seeds: [3]});
            expect(result.images[0].rgb.length).toBe(64 * 64 * 3);
            expect(new Set(result.images[0].rgb).size).toBeGreaterThan(20);
            images.set(sampler, bytesOf(result));
        }
        const distinct = new Set([...images.values()].map((bytes) => bytes.toString("base64")));
        expect(distinct.size).toBe(samplerNames.length);
    });

    it("changes the image with the negative prompt, the prompt and the guidance scale", async () => {
        const plain = bytesOf(await run(engine, {seeds: [11]}));
        const negative = bytesOf(await run(engine, {seeds: [11], negativePrompt: "blurry painting"}));
        const otherPrompt = bytesOf(await run(engine, {seeds: [11], prompt: "a red house"}));
        const unguided = bytesOf(await run(engine, {seeds: [11], guidanceScale: 1}));
        const unguidedNegative = bytesOf(await run(engine, {seeds: [11], guidanceScale: 1, negativePrompt: "blurry painting"}));
        for (const other of [negative, otherPrompt, unguided])
            expect(meanDifference(other, plain)).toBeGreaterThan(0.5);
        // Without guidance only the conditional pass runs: the negative prompt has no effect.
        expect(unguidedNegative.equals(unguided)).toBe(true);
    });

    it("counts CLIP tokens of the prompt and negative prompt, and truncates a long prompt to the 77-token window", async () => {
        // <|startoftext|> a photo of a cat <|endoftext|> = 7; <|startoftext|> blurry <|endoftext|> = 3.
        expect(await run(engine, {prompt: "a photo of a cat"})).toMatchObject({inputTokens: 7, truncated: false});
        expect(await run(engine, {prompt: "a photo of a cat", negativePrompt: "blurry"})).toMatchObject({inputTokens: 10, truncated: false});
        expect(await run(engine, {prompt: "a photo of a cat", negativePrompt: "blurry", guidanceScale: 1})).toMatchObject({inputTokens: 7});

        const long = Array.from({length: 100}, (_, i) => ["cat", "dog", "tree", "house"][i % 4]).join(" ");
        const warnings: string[] = [];
        const warned = await OnnxImageEngine.load(workers, entry(tinySdPath), {threads: 1, parallel: 1, queueSize: 1, onWarning: (message) => warnings.push(message)});
        const truncated = await run(warned, {prompt: long});
        expect(truncated).toMatchObject({inputTokens: 77, truncated: true});
        expect(warnings).toEqual([expect.stringContaining("longer than the text encoder's 77 tokens")]);
        await run(warned, {prompt: "a cat"});
        expect(warnings).toHaveLength(1);
        // Words past the window do not change the image.
        const longer = await run(engine, {prompt: long + " sunset mountain lake"});
        expect(bytesOf(longer).equals(bytesOf(truncated))).toBe(true);
    });

    it("sends one step message per step, in order, and the requested previews at spread steps", async () => {
        const messages: ImageProgress[] = [];
        const result = await run(engine, {steps: 6, previews: 3, seeds: [1, 2], sampler: "Heun"}, (message) => messages.push(message));
        const steps = messages.filter((message) => message.type === "step");
        expect(steps.map((message) => message.step)).toEqual([1, 2, 3, 4, 5, 6]);
        expect(steps.every((message) => message.steps === 6)).toBe(true);
        expect(steps.map((message) => message.elapsedMs)).toEqual([...steps.map((message) => message.elapsedMs)].sort((a, b) => a - b));

        const previews = messages.filter((message): message is ImagePreview => message.type === "preview");
        expect(previews.map((preview) => [preview.partialIndex, preview.image, preview.step])).toEqual([
            [0, 0, 2], [0, 1, 2], [1, 0, 3], [1, 1, 3], [2, 0, 5], [2, 1, 5]
        ]);
        for (const preview of previews) {
            // The latent-to-RGB projection: one pixel per latent pixel.
            expect(preview).toMatchObject({width: 8, height: 8});
            expect(preview.rgb.length).toBe(8 * 8 * 3);
            expect(new Set(preview.rgb).size).toBeGreaterThan(5);
        }
        // Each preview message comes after its step's message.
        expect(messages.indexOf(previews[0])).toBe(messages.indexOf(steps[1]) + 1);
        expect(result.images).toHaveLength(2);

        // A non-square image: the projection preview has the latent's shape (width/8 x height/8).
        const wide: ImagePreview[] = [];
        await run(engine, {width: 128, height: 64, steps: 2, previews: 1}, (message) => message.type === "preview" && wide.push(message));
        expect(wide.map((preview) => [preview.width, preview.height, preview.rgb.length])).toEqual([[16, 8, 16 * 8 * 3]]);

        const none: ImageProgress[] = [];
        await run(engine, {steps: 2, previews: 0}, (message) => none.push(message));
        expect(none.map((message) => message.type)).toEqual(["step", "step"]);
    });

    it("decodes previews with the manifest's preview decoder, at its output size", async () => {
        const withDecoder = await load(workers, tinySdPath, {previewDecoder: "vae_decoder/model.onnx"});
        const previews: ImagePreview[] = [];
        await run(withDecoder, {steps: 3, previews: 1}, (message) => message.type === "preview" && previews.push(message));
        expect(previews).toHaveLength(1);
        expect(previews[0]).toMatchObject({width: 64, height: 64, step: 2});
        expect(previews[0].rgb.length).toBe(64 * 64 * 3);
    });

    it("stops at the step where the request is aborted, rejects with the reason, and frees the worker", async () => {
        const controller = new AbortController();
        const reason = new Error("client went away");
        const seen: ImageProgress[] = [];
        const aborted = engine.generate(job({steps: 20, previews: 3}), {
            signal: controller.signal,
            onProgress: (message) => {
                seen.push(message);
                controller.abort(reason);
            }
        });
        await expect(aborted).rejects.toBe(reason);
        expect(seen).toHaveLength(1);
        expect(seen[0]).toMatchObject({type: "step", step: 1});
        expect(engine.load()).toEqual({parallel: 1, busy: 0, waiting: 0});
        // The one worker is free: the next generation runs.
        expect((await run(engine, {steps: 2})).images).toHaveLength(1);
    });

    it("queues up to queueSize generations and refuses more; dispose waits for the running one", async () => {
        const small = await load(workers, tinySdPath, {}, {parallel: 1, queueSize: 1});
        const running = run(small, {steps: 3});
        const waiting = run(small, {steps: 3});
        expect(small.load()).toEqual({parallel: 1, busy: 1, waiting: 1});
        expect(() => run(small, {steps: 3})).toThrow(QueueFullError);
        const disposed = small.dispose();
        await expect(waiting).rejects.toBeInstanceOf(EngineDisposedError);
        expect((await running).images).toHaveLength(1);
        await disposed;
        expect(() => run(small)).toThrow(EngineDisposedError);
    });
});

describe("images task module (in this process)", () => {
    it("checks the cancel flag after every step: cancelled during step 1, it sends no step 2 and throws TaskCancelledError", async () => {
        const {tasks} = await import("../../src/capabilities/images/onnx/imageTasks.js");
        let cancelled = false;
        const progress: unknown[] = [];
        const context: TaskContext = {
            get cancelled() {
                return cancelled;
            },
            throwIfCancelled() {
                if (cancelled)
                    throw new TaskCancelledError();
            },
            progress(message) {
                progress.push(message);
                cancelled = true;
            }
        };
        const model = {key: "tiny-sd", folder: tinySdPath, threads: 1, previewDecoder: null};
        await expect(tasks.generate({model, job: job({steps: 20, previews: 3})}, context)).rejects.toBeInstanceOf(TaskCancelledError);
        expect(progress).toEqual([expect.objectContaining({type: "step", step: 1})]);

        cancelled = false;
        const finished: unknown[] = [];
        const moved = await tasks.generate({model, job: job({steps: 3})}, {...context, progress: (message) => finished.push(message)});
        // The result is wrapped for piscina to move its pixel buffers; unwrap it as piscina would.
        const result = (moved as unknown as Record<symbol, ImageResult>)[Piscina.valueSymbol];
        expect(result.images[0].rgb.length).toBe(64 * 64 * 3);
        expect(finished).toHaveLength(3);
    });
});

describe("export variants", () => {
    it("runs an fp16 export (float16 inputs, outputs and timestep, fixed 8x8 UNet, no configs) to nearly the fp32 image", async () => {
        const fp16 = await load(workers, tinySdFp16Path);
        expect(fp16.nativeSize).toEqual({width: 64, height: 64});
        expect(fp16.sizeBounds).toEqual({min: 64, max: 64, multiple: 8});
        const fp32 = await load(workers, tinySdFloatTimestepPath);
        for (const sampler of ["Euler", "DDIM"] as const) {
            const half = await run(fp16, {sampler, seeds: [21]});
            const full = await run(fp32, {sampler, seeds: [21]});
            expect(half.images[0].rgb.length).toBe(64 * 64 * 3);
            // Same random weights (rounded to float16), float32 compute: at most rounding differences.
            expect(meanDifference(half.images[0].rgb, full.images[0].rgb)).toBeLessThan(1);
            expect(half.inputTokens).toBe(full.inputTokens);
        }
    });

    it("runs a float32-timestep export (timestep [1], tokenizer.json) and an int64-timestep one", async () => {
        const floatTimestep = await load(workers, tinySdFloatTimestepPath);
        const float = await run(floatTimestep, {seeds: [4], steps: 3});
        const int = await run(engine, {seeds: [4], steps: 3});
        expect(new Set(float.images[0].rgb).size).toBeGreaterThan(20);
        // Same weights; the int64 export gets the nearest whole timestep, the float one the exact fractional one.
        expect(meanDifference(float.images[0].rgb, int.images[0].rgb)).toBeLessThan(3);
    });
});

describe("LCM-style export (rank-0 timestep, timestep_cond)", () => {
    it("feeds the guidance scale as the timestep_cond embedding and runs no unconditional pass", async () => {
        const lcm = await load(workers, tinySdLcmPath);
        const plain = await run(lcm, {seeds: [2], guidanceScale: 8});
        expect(plain.images[0].rgb.length).toBe(64 * 64 * 3);
        expect(new Set(plain.images[0].rgb).size).toBeGreaterThan(20);
        // The guidance scale reaches the network through the embedding...
        const otherScale = await run(lcm, {seeds: [2], guidanceScale: 2});
        expect(meanDifference(otherScale.images[0].rgb, plain.images[0].rgb)).toBeGreaterThan(0.5);
        // ...and there is no unconditional half: the negative prompt changes nothing and is not counted.
        const negative = await run(lcm, {seeds: [2], guidanceScale: 8, negativePrompt: "blurry painting"});
        expect(bytesOf(negative).equals(bytesOf(plain))).toBe(true);
        expect(negative.inputTokens).toBe(plain.inputTokens);
    });
});

describe("CLIP tokenizer", () => {
    const prompts = ["a photo of a cat", "A  Red HOUSE, with blue sky!!", "astronaut's 123 horses", "café ünïcode 日本", "", "riding\na\thorse"];

    it("builds the same tokenizer from vocab.json + merges.txt as from tokenizer.json", async () => {
        const fromMerges = await loadClipTokenizer(tinySdPath);
        const fromJson = await loadClipTokenizer(tinySdFloatTimestepPath);
        for (const prompt of prompts)
            expect(fromMerges.encode(prompt)).toEqual(fromJson.encode(prompt));
    });

    it("splits words with CLIP's byte-level BPE and </w> word ends", async () => {
        const {vocabulary} = testSdTokenizer();
        const tokenizer = await loadClipTokenizer(tinySdPath);
        const tokens = (text: string) => tokenizer.encode(text).map((id) => vocabulary[id]);
        expect(tokens("A photo of a CAT")).toEqual(["<|startoftext|>", "a</w>", "photo</w>", "of</w>", "a</w>", "cat</w>", "<|endoftext|>"]);
        expect(tokens("zoo!")).toEqual(["<|startoftext|>", "z", "o", "o</w>", "!</w>", "<|endoftext|>"]);
        expect(tokens("")).toEqual(["<|startoftext|>", "<|endoftext|>"]);
    });

    it("takes the pad token from tokenizer_config.json and keeps an SD2-style pad token '!' an ordinary token", async () => {
        const folder = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "sd2-tokenizer-")), "sd");
        makeTestSdModel(folder, {seed: 1});
        const configFile = path.join(folder, "tokenizer", "tokenizer_config.json");
        fs.writeFileSync(configFile, JSON.stringify({...JSON.parse(fs.readFileSync(configFile, "utf8")), pad_token: "!"}));
        const {vocabulary} = testSdTokenizer();
        const tokenizer = await loadClipTokenizer(folder);
        expect(vocabulary[tokenizer.pad_token_id!]).toBe("!");
        expect(tokenizer.encode("a cat!").map((id) => vocabulary[id])).toEqual(["<|startoftext|>", "a</w>", "cat</w>", "!</w>", "<|endoftext|>"]);
        fs.rmSync(path.dirname(folder), {recursive: true, force: true});
    });
});

describe("the pipeline's copies in the worker pool", () => {
    const loadedPerWorker = (workers: WorkerPool) => workers.runOnEach(imageTaskHandles.loadedPipelines, null);

    it("with manifest workers: 1, two generations at once share one copy on one worker of two; dispose frees it", async () => {
        const workers = pool(2);
        const pinned = await load(workers, tinySdPath, {}, {parallel: 2, workers: 1});
        await Promise.all([run(pinned, {seeds: [1]}), run(pinned, {seeds: [2]})]);
        expect(await loadedPerWorker(workers)).toEqual([1, 0]);
        await pinned.dispose();
        expect(await loadedPerWorker(workers)).toEqual([0, 0]);
    });

    it("by default every worker may load it (two at once load two copies); dispose frees both", async () => {
        const workers = pool(2);
        const spread = await load(workers, tinySdPath, {}, {parallel: 2});
        await Promise.all([run(spread, {seeds: [1]}), run(spread, {seeds: [2]})]);
        expect(await loadedPerWorker(workers)).toEqual([1, 1]);
        await spread.dispose();
        expect(await loadedPerWorker(workers)).toEqual([0, 0]);
    });
});

