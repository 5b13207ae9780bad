import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config.js";
import type { ModelEntry } from "../../src/core/registry/ModelEntry.js";
import { chatCapability } from "../../src/capabilities/chat/chatCapability.js";
import type { ChatSettings } from "../../src/capabilities/chat/chatManifest.js";
import { estimateModelBytes } from "../../src/runtimes/estimateModelBytes.js";
import { makeTestLlamaGguf } from "../support/gguf/makeTestLlamaGguf.js";
import { jsonOf, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyBertPath, tinyChatModelPath } from "../support/testModels.js";

/**
 * The memory budget rests on estimates made before a model loads. On a generated chat model of ~60 MB
 * (f32 weights, so the file is mostly weights), the estimate (node-llama-cpp's GgufInsights, plus the margin)
 * is checked against what loading it and answering one request (which touches every weight page) added
 * to the process' resident memory: never below it (the budget must not be overrun), at most 2x of it.
 * Measured on the 2-core test machine: file 75 MiB; node-llama-cpp's estimate 88 MiB, 129 MiB with the margin;
 * resident growth 83 to 102 MiB over four runs (docs/models.md "Memory estimates").
 */
const mb = 1024 ** 2;
let dir: string;
let bigModel: string;
let longModel: string;
let server: TestServer;

beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "los-estimate-"));
    bigModel = path.join(dir, "big.gguf");
    await makeTestLlamaGguf(bigModel, {seed: 3, nEmbd: 384, nLayers: 8, nHeads: 6, nKvHeads: 6, nFf: 1536});
    // The tiny architecture trained for 256 K tokens: 256 bytes of KV cache a token, 64 MB at its training context.
    longModel = path.join(dir, "long.gguf");
    await makeTestLlamaGguf(longModel, {seed: 4, contextLength: 262_144});
    server = await startTestServer({
        // The small model is preloaded: the llama.cpp runtime's own memory is in place before the measured load.
        models: [
            {id: "warm", task: "chat", path: tinyChatModelPath, contextSize: 256, parallel: 1, preload: true},
            {id: "big", task: "chat", path: bigModel, contextSize: 512, parallel: 1}
        ],
        config: {preloadAll: false, keepAliveSeconds: null}
    });
}, 120_000);
afterAll(async () => {
    await server?.stop();
    fs.rmSync(dir, {recursive: true, force: true});
});

const entry = (fields: Partial<ModelEntry> & Pick<ModelEntry, "id" | "task" | "path">): ModelEntry => ({
    family: null, released: null, aliases: [], ownedBy: "local", contextSize: null, threads: null, parallel: null, settings: {}, ...fields
});

describe("memory estimates", () => {
    it("a generated GGUF chat model: the estimate is at least the resident memory it takes once used, at most 2x of it", async () => {
        const fileBytes = fs.statSync(bigModel).size;
        expect(fileBytes).toBeGreaterThan(50 * mb);
        const before = process.memoryUsage.rss();
        const response = await server.post("/v1/chat/completions", {model: "big", max_tokens: 4, messages: [{role: "user", content: "hi"}]});
        expect(response.status).toBe(200);
        const grown = process.memoryUsage.rss() - before;
        const status = (await jsonOf(await fetch(`${server.url}/v1/models/big`))).status;
        expect(status.value).toBe("loaded");
        // The estimate covers the weights and the context: more than the file alone.
        expect(status.estimated_bytes).toBeGreaterThan(fileBytes);
        const figures = `file ${fileBytes}, estimated ${status.estimated_bytes}, grown ${grown}`;
        expect(status.estimated_bytes / grown, figures).toBeGreaterThanOrEqual(1);
        // At most twice: what the process gives back to the OS around the load varies from run to run (growth 83 to 102 MiB).
        expect(status.estimated_bytes / grown, figures).toBeLessThanOrEqual(2);
    });

    it("--gpu auto with --vram-budget auto: the VRAM budget is unknown (null) until a GGUF model is estimated, then 0 on the CPU", async () => {
        // The process' llama.cpp runtime is the CPU one (the first server's preload, --gpu off, made it, and the first caller's
        // options decide): `auto` finds no GPU whatever this machine has, as on a machine without one.
        const onCpu = await startTestServer({models: [{id: "small", task: "chat", path: tinyChatModelPath, contextSize: 256, parallel: 1}],
            config: {preloadAll: false, keepAliveSeconds: null, gpu: "auto", vramBudget: "auto"}});
        try {
            const memory = async () => (await jsonOf(await fetch(`${onCpu.url}/models`))).memory;
            expect(await memory()).toMatchObject({vram_budget_bytes: null, vram_in_use_bytes: 0});
            expect((await onCpu.post("/v1/chat/completions", {model: "small", max_tokens: 2, messages: [{role: "user", content: "hi"}]})).status).toBe(200);
            expect(await memory()).toMatchObject({vram_budget_bytes: 0, vram_in_use_bytes: 0});
            expect(await (await fetch(`${onCpu.url}/metrics`)).text()).toMatch(/^los_vram_budget_bytes 0$/m);
        } finally {
            await onCpu.stop();
        }
    });

    it("an ONNX model: its weight files times the workers that load it, plus the margin", async () => {
        const weights = fs.statSync(path.join(tinyBertPath, "onnx", "model.onnx")).size;
        const config = {...defaultConfig, workers: 2};
        const all = await estimateModelBytes(entry({id: "bert", task: "embeddings", path: tinyBertPath}), config);
        const one = await estimateModelBytes(entry({id: "bert", task: "embeddings", path: tinyBertPath, workers: 1}), config);
        expect(one).toEqual({ram: Math.round(weights * 1.1 + 32 * mb), vram: 0});
        expect(all).toEqual({ram: Math.round(2 * weights * 1.1 + 32 * mb), vram: 0});
    });

    it("a chat model with a draft model: the draft's weights and its context of the same shape are added", async () => {
        const chat = entry({id: "big", task: "chat", path: bigModel, contextSize: 512, parallel: 2, settings: {draftModel: tinyChatModelPath, speculative: "draft"}});
        const shape = chatCapability.ggufContext!(chat as ModelEntry<ChatSettings>, defaultConfig, undefined);
        expect(shape).toEqual({contextSize: 512, sequences: 2, companions: [tinyChatModelPath], gpuLayers: "auto"});
        const alone = await estimateModelBytes(chat, defaultConfig, () => ({...shape, companions: []}));
        const draft = await estimateModelBytes(entry({id: "draft", task: "chat", path: tinyChatModelPath}), defaultConfig, () => ({...shape, companions: []}));
        const both = await estimateModelBytes(chat, defaultConfig, () => shape);
        // (a + b) * 1.1 + margin = (a * 1.1 + margin) + (b * 1.1 + margin) - margin, to rounding.
        expect(Math.abs(both.ram - (alone.ram + draft.ram - 32 * mb))).toBeLessThanOrEqual(2);
        expect(draft.ram - 32 * mb).toBeGreaterThan(fs.statSync(tinyChatModelPath).size);
        expect([alone.vram, draft.vram, both.vram]).toEqual([0, 0, 0]);
    });

    // A made-up GPU (node-llama-cpp's resolver and estimator are told of it; the runtime stays the CPU one), so the split
    // is tested without a GPU stack.
    const gpu = (totalMb: number, freeMb = totalMb) => ({backend: "cuda" as const, vram: {total: totalMb * mb, free: freeMb * mb, unifiedSize: 0}});
    const onGpu = (gpuLayers: "auto" | "max" | number, gpuReport: ReturnType<typeof gpu> | null) =>
        estimateModelBytes(entry({id: "big", task: "chat", path: bigModel, contextSize: 512, parallel: 1}), {...defaultConfig, gpu: "off", gpuLayers, gpuReport},
            (model, trained) => chatCapability.ggufContext!(model as ModelEntry<ChatSettings>, {...defaultConfig, gpuLayers}, trained));

    it("a GGUF model with a GPU: the layers offloaded and their context are VRAM, the rest RAM; without a GPU all is RAM", async () => {
        const cpu = await onGpu("max", null);
        const none = await onGpu(0, gpu(8192));
        const all = await onGpu("max", gpu(8192));
        const auto = await onGpu("auto", gpu(8192));
        const some = await onGpu(4, gpu(8192));
        const figures = JSON.stringify({cpu, none, all, auto, some});
        expect(cpu.vram, figures).toBe(0);
        expect(none, figures).toEqual(cpu);
        // Every layer on the GPU: the weights are VRAM (the file is mostly f32 weights), little stays in RAM.
        expect(all.vram, figures).toBeGreaterThan(fs.statSync(bigModel).size);
        expect(all.ram, figures).toBeLessThan(cpu.ram - 40 * mb);
        // `auto` on an 8 GB device fits every layer of a 75 MB model; half of the layers puts about half of them there.
        expect(auto, figures).toEqual(all);
        expect(some.vram, figures).toBeGreaterThan(0);
        expect(some.vram, figures).toBeLessThan(all.vram);
        expect(some.ram, figures).toBeGreaterThan(all.ram);
        expect(some.ram, figures).toBeLessThan(cpu.ram);
    });

    describe("a chat model given no context size: its training context, or the largest that fits the memory budget", () => {
        // The model's file is written in beforeAll: the entry is made when a test runs.
        let long: ModelEntry;
        beforeAll(() => {
            long = entry({id: "long", task: "chat", path: longModel, parallel: 1});
        });
        // No GPU, whatever the machine has: the fit is then in RAM alone.
        const config = (memoryBudget: number) => ({...defaultConfig, gpu: "off" as const, contextSize: 0, memoryBudget});
        const shapeOf = (budget: number) => (model: ModelEntry, trained: number | undefined) => chatCapability.ggufContext!(model as ModelEntry<ChatSettings>, config(budget), trained);
        const sized = (contextSize: number) => () => ({contextSize, sequences: 1, gpuLayers: "auto" as const});

        it("the largest multiple of 1,024 tokens whose estimate fits, the size its estimate counts; the training context when it fits", async () => {
            const budget = 72 * mb;
            const estimate = await estimateModelBytes(long, config(budget), shapeOf(budget));
            const contextSize = estimate.contextSize!;
            expect(estimate.trainContextSize).toBe(262_144);
            expect(contextSize % 1024).toBe(0);
            expect(contextSize).toBeGreaterThan(4096);
            expect(contextSize).toBeLessThan(262_144);
            expect(estimate).toEqual({...await estimateModelBytes(long, config(budget), sized(contextSize)), trainContextSize: 262_144, fitted: true});
            expect(estimate.ram).toBeLessThanOrEqual(budget);
            expect((await estimateModelBytes(long, config(budget), sized(contextSize + 1024))).ram).toBeGreaterThan(budget);
            // Room for all of it: the training context.
            expect((await estimateModelBytes(long, config(1024 * mb), shapeOf(1024 * mb))).contextSize).toBe(262_144);
            // No room even for 4,096 tokens: 4,096 (the budget then refuses the model, naming its size).
            expect((await estimateModelBytes(long, config(8 * mb), shapeOf(8 * mb))).contextSize).toBe(4096);
        });

        it("with a GPU and --vram-budget auto, the context fits the VRAM budget too", async () => {
            // A made-up 320 MB GPU (node-llama-cpp's resolver and estimator are told of it): every layer and the KV cache on it.
            const onGpu = {...config(4096 * mb), vramBudget: "auto" as const, gpuReport: gpu(320)};
            const shape = (model: ModelEntry, trained: number | undefined) => chatCapability.ggufContext!(model as ModelEntry<ChatSettings>, onGpu, trained);
            const estimate = await estimateModelBytes({...long, parallel: 4}, onGpu, shape);
            expect(estimate.contextSize).toBeLessThan(262_144);
            // defaultVramBudget: 85% of the VRAM.
            expect(estimate.vram).toBeLessThanOrEqual(0.85 * 320 * mb);
            expect(estimate.vram).toBeGreaterThan(0);
        });

        it("through HTTP: the model loads with the size its estimate counted (tokenize's max_model_len, GET /v1/models), where its training context would be refused", async () => {
            const budget = 72 * mb;
            const estimate = await estimateModelBytes(long, config(budget), shapeOf(budget));
            const logLines: string[] = [];
            const fitted = await startTestServer({logLines, models: [{id: "long", task: "chat", path: longModel, parallel: 1}],
                config: {preloadAll: false, keepAliveSeconds: null, contextSize: 0, memoryBudget: budget, gpu: "off", logLevel: "info"}});
            try {
                const tokenized = await jsonOf(await fitted.post("/v1/tokenize", {model: "long", content: "hi"}));
                expect(tokenized.max_model_len).toBe(estimate.contextSize);
                expect((await fitted.post("/v1/chat/completions", {model: "long", max_tokens: 2, messages: [{role: "user", content: "hi"}]})).status).toBe(200);
                expect((await jsonOf(await fetch(`${fitted.url}/v1/models/long`))).status).toMatchObject({
                    estimated_bytes: estimate.ram, context_size: estimate.contextSize, train_context_size: 262_144});
                expect(logLines.filter((line) => line.includes("does not fit the memory budget"))).toEqual([
                    expect.stringContaining(`Model 'long': its training context (262144 tokens a sequence) does not fit the memory budget (or the VRAM budget) at 1 sequences; it gets ${estimate.contextSize}`)
                ]);
            } finally {
                await fitted.stop();
            }
            // Beside a pinned model (never evicted), the context fits what the pinned one leaves of the budget (before: fitted
            // to the whole budget, the model waited for memory the pinned one never gives back, then a 503, every time).
            const wider = 100 * mb;
            const alone = (await estimateModelBytes(long, config(wider), shapeOf(wider))).contextSize!;
            const pinned = await startTestServer({models: [
                {id: "warm", task: "chat", path: tinyChatModelPath, contextSize: 256, parallel: 1, pin: true, preload: true},
                {id: "long", task: "chat", path: longModel, parallel: 1}
            ], config: {preloadAll: false, keepAliveSeconds: null, contextSize: 0, memoryBudget: wider, gpu: "off", memoryWaitSeconds: 5}});
            try {
                // The pinned model loaded first (a request waits for its preload).
                expect((await pinned.post("/v1/chat/completions", {model: "warm", max_tokens: 1, messages: [{role: "user", content: "hi"}]})).status).toBe(200);
                const tokenized = await jsonOf(await pinned.post("/v1/tokenize", {model: "long", content: "hi"}));
                expect(tokenized.max_model_len).toBeLessThan(alone);
                expect(tokenized.max_model_len).toBeGreaterThanOrEqual(4096);
                const models = await jsonOf(await fetch(`${pinned.url}/models`));
                const held = models.data.map((model: {id: string, status: {value: string, estimated_bytes: number}}) => model.status.value === "loaded" ? model.status.estimated_bytes : 0);
                expect(held.reduce((sum: number, bytes: number) => sum + bytes, 0)).toBeLessThanOrEqual(wider);
                expect(models.data.find((model: {id: string}) => model.id === "warm").status.value).toBe("loaded");
            } finally {
                await pinned.stop();
            }
            // The pinned model loaded after it: the next load fits beside it (the estimate is made again for a fitted context).
            const later = await startTestServer({models: [
                {id: "warm", task: "chat", path: tinyChatModelPath, contextSize: 256, parallel: 1, pin: true},
                {id: "long", task: "chat", path: longModel, parallel: 1}
            ], config: {preloadAll: false, keepAliveSeconds: null, contextSize: 0, memoryBudget: wider, gpu: "off", memoryWaitSeconds: 5}});
            try {
                const ask = (model: string) => later.post("/v1/chat/completions", {model, max_tokens: 1, messages: [{role: "user", content: "hi"}]});
                expect((await ask("long")).status).toBe(200);
                expect((await ask("warm")).status).toBe(200);
                expect((await ask("long")).status).toBe(200);
                expect((await jsonOf(await later.post("/v1/tokenize", {model: "long", content: "hi"}))).max_model_len).toBeLessThan(alone);
            } finally {
                await later.stop();
            }
            // The training context set explicitly does not fit: refused as larger than the whole budget.
            const explicit = await startTestServer({models: [{id: "long", task: "chat", path: longModel, parallel: 1, contextSize: 262_144}], config: {preloadAll: false, keepAliveSeconds: null, memoryBudget: budget, gpu: "off"}});
            try {
                const refused = await explicit.post("/v1/chat/completions", {model: "long", max_tokens: 2, messages: [{role: "user", content: "hi"}]});
                expect(refused.status).toBe(503);
                expect((await jsonOf(refused)).error.code).toBe("model_too_large");
            } finally {
                await explicit.stop();
            }
        });
    });
});
