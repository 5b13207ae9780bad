import fs from "node:fs";
import path from "node:path";
import type { MemoryEstimate, ModelEstimate } from "../core/engines/MemoryEstimate.js";
import type { ModelEntry } from "../core/registry/ModelEntry.js";
import { defaultVramBudget, type GpuSetting, type LlamaBuildSetting } from "../settings/serverSettings.js";

/** The server settings an estimate depends on (the server's Config has them all). */
export type EstimateSettings = {
    /** The worker pool's size: an ONNX model's copies, unless the manifest entry's `workers` says fewer. */
    workers: number;
    flashAttention: "on" | "off" | "auto";
    llamaBuild: LlamaBuildSetting;
    gpu: GpuSetting;
    /** Layers the engines offload to a GPU (`--gpu-layers`): `auto` (what fits), `max`, or a number. */
    gpuLayers: "auto" | "max" | number;
    /**
     * The GPU the estimate plans for; default: the llama.cpp runtime's own (none on the CPU). Tests give a made-up one,
     * so the split between RAM and VRAM is tested without a GPU stack.
     */
    gpuReport?: GpuReport | null;
};

/** A GPU as node-llama-cpp reports it: its backend and its VRAM (`getVramState`). */
export type GpuReport = {backend: "cuda" | "vulkan" | "metal", vram: {total: number, free: number, unifiedSize: number}};

/**
 * The context a GGUF model's engine will create (its capability says: a chat context, an embedding context), and the
 * other GGUF files it loads beside the model, each with a context of the same shape (a chat model's draft model).
 */
export type GgufContextShape = {
    contextSize: number, sequences: number, batchSize?: number, isEmbeddingContext?: boolean, companions?: readonly string[],
    /** Layers its engine asks to offload (a chat model: `--gpu-layers`); default node-llama-cpp's `auto`. */
    gpuLayers?: "auto" | "max" | number,
    /**
     * `contextSize` is then the most it may have: it gets the largest context (a multiple of 1,024 tokens, and at least
     * 4,096 or `contextSize` if smaller) whose estimate, margin included, fits these bytes of RAM (and of VRAM when
     * given; `auto`: `--vram-budget auto`'s share of the GPU's VRAM, none without a GPU). As llama.cpp's `--fit` and
     * node-llama-cpp's `auto` context size fit the device.
     */
    fitWithin?: {ram: number, vram?: number | "auto"}
};

/** A GGUF model's context shape, from its entry and the context size it was trained for (when its file says). */
export type GgufContextOf = (entry: ModelEntry, trainContextSize: number | undefined) => GgufContextShape;

/** Without a capability's word: one sequence of the trained context. */
const defaultGgufContext: GgufContextOf = (_entry, trainContextSize) => ({contextSize: trainContextSize ?? 4096, sequences: 1});

/**
 * What a model's engine adds on top of its weights and context, whatever the runtime: the engine's own
 * buffers, the tokenizer, allocator slack. A fixed part and a share of the estimate (docs/models.md says
 * what it was measured against).
 */
const marginBytes = 32 * 1024 ** 2;
const marginShare = 0.1;

/** ONNX files hold the weights (`.onnx`, `.onnx_data`, `.onnx.data`, and the `_data` of large models). */
const onnxWeightFile = /\.onnx(_data|\.data)?$|\.onnx_data_\d+$/i;

/**
 * Bytes a model will take once loaded, in RAM and in a GPU's VRAM, estimated before loading it:
 * - GGUF: node-llama-cpp's own estimator (GgufInsights) for the weights and for the context the engine will
 *   create (`contextOf`: the model's capability says its shape; flash attention as the server sets it), and the same
 *   for the files it loads beside it (a draft model, with a context of the same shape). With a GPU, the layers
 *   offloaded are those node-llama-cpp resolves for the load (`gpuLayers`: a number and `max` as given, `auto` by its
 *   resolver against the VRAM free now); their weights and their part of the context are VRAM, the rest RAM. Without
 *   a GPU everything is RAM.
 * - ONNX: the weight files' sizes times the copies the worker
 *   placement makes (manifest `workers`, default every worker of the pool); all RAM (ONNX runs on the CPU).
 * Each device plus a margin (RAM: a fixed part and a share; VRAM: the share). A GGUF whose header cannot be read is
 * estimated from its file size, in RAM (its load will say what is wrong).
 */
export async function estimateModelBytes(entry: ModelEntry, config: EstimateSettings, contextOf: GgufContextOf = defaultGgufContext): Promise<ModelEstimate> {
    if (entry.path.toLowerCase().endsWith(".gguf"))
        return await ggufEstimate(entry, config, contextOf).then(async ({bytes, shape, trainContextSize}) => ({
            ...await bytes(shape.contextSize), contextSize: shape.contextSize, ...(trainContextSize != null ? {trainContextSize} : {}),
            ...(shape.fitWithin != null ? {fitted: true} : {})
        })).catch(() => withMargin({ram: fileBytes(entry.path), vram: 0}));
    return withMargin({ram: onnxFilesBytes(entry.path) * Math.min(entry.workers ?? config.workers, config.workers), vram: 0});
}

/** Tokens per sequence a context is fitted in steps of, and the least it is shrunk to (a model that needs less is refused instead). */
const fitStep = 1024;
const fitMinimum = 4096;

/** A GGUF model's context shape (fitted, when it asks), and its estimate (margin included) for a context size of that shape. */
async function ggufEstimate(entry: ModelEntry, config: EstimateSettings, contextOf: GgufContextOf) {
    const {insights, bytes: modelBytes, gpu} = await ggufInsights(entry.path, config);
    const asked = contextOf(entry, insights.trainContextSize);
    const companions = await Promise.all((asked.companions ?? []).map((companion) => ggufInsights(companion, config).then(({bytes: companionBytes}) => companionBytes,
        () => async () => ({ram: fileBytes(companion), vram: 0}))));
    const bytes = async (contextSize: number): Promise<MemoryEstimate> => {
        const total = {ram: 0, vram: 0};
        for (const part of [modelBytes, ...companions]) {
            const {ram, vram} = await part({...asked, contextSize});
            total.ram += ram;
            total.vram += vram;
        }
        return withMargin(total);
    };
    const within = asked.fitWithin == null ? null : {
        ram: asked.fitWithin.ram,
        vram: asked.fitWithin.vram !== "auto" ? asked.fitWithin.vram : gpu == null ? undefined : defaultVramBudget(gpu.vram.total)
    };
    const fits = async (contextSize: number) => {
        const {ram, vram} = await bytes(contextSize);
        return ram <= within!.ram && (within!.vram == null || vram <= within!.vram);
    };
    let contextSize = asked.contextSize;
    if (within != null && !await fits(contextSize)) {
        // The largest multiple of the step that fits, between the minimum and the size asked (the estimate grows with the context).
        let low = Math.ceil(Math.min(fitMinimum, asked.contextSize) / fitStep);
        let high = Math.ceil(asked.contextSize / fitStep) - 1;
        if (low > high || !await fits(low * fitStep))
            contextSize = Math.min(fitMinimum, asked.contextSize);
        else {
            while (low < high) {
                const middle = Math.ceil((low + high) / 2);
                if (await fits(middle * fitStep))
                    low = middle;
                else
                    high = middle - 1;
            }
            contextSize = low * fitStep;
        }
    }
    return {shape: {...asked, contextSize}, bytes, trainContextSize: insights.trainContextSize};
}

function withMargin(raw: MemoryEstimate): MemoryEstimate {
    return {ram: Math.round(raw.ram * (1 + marginShare) + marginBytes), vram: Math.round(raw.vram * (1 + marginShare))};
}

/** A GGUF file's insights, and the bytes its weights and a context of a given shape take, in RAM and in VRAM. */
async function ggufInsights(file: string, config: EstimateSettings) {
    const {readGgufFileInfo, GgufInsights} = await import("node-llama-cpp");
    const {loadLlamaRuntime} = await import("./llama/llamaRuntime.js");
    const info = await readGgufFileInfo(file, {logWarnings: false});
    const llama = await loadLlamaRuntime({build: config.llamaBuild, gpu: config.gpu});
    const insights = await GgufInsights.from(info, llama);
    const gpu = config.gpuReport !== undefined ? config.gpuReport
        : llama.gpu === false ? null : {backend: llama.gpu, vram: await llama.getVramState()};
    const flashAttention = config.flashAttention !== "off" && insights.flashAttentionSupported;
    // As LlamaModel.load resolves them: node-llama-cpp's resolver, told of the GPU the load will use. It does not depend
    // on the context's size, so a context fitted step by step resolves them once.
    const resolvedLayers = new Map<GgufContextShape["gpuLayers"], Promise<number>>();
    const layersFor = (asked: GgufContextShape["gpuLayers"]) => {
        let layers = resolvedLayers.get(asked);
        if (layers == null)
            resolvedLayers.set(asked, layers = gpu == null ? Promise.resolve(0) : insights.configurationResolver.resolveModelGpuLayersV2(asked ?? "auto", {
                getVramState: async () => gpu.vram, llamaGpu: gpu.backend, llamaSupportsGpuOffloading: true, defaultContextFlashAttention: flashAttention
            }).then(({gpuLayers}) => gpuLayers));
        return layers;
    };
    const bytes = async ({companions: _companions, gpuLayers: asked, fitWithin: _fitWithin, ...shape}: GgufContextShape) => {
        const gpuLayers = await layersFor(asked);
        const weights = insights.estimateModelResourceRequirements({gpuLayers});
        const context = insights.estimateContextResourceRequirements({...shape, modelGpuLayers: gpuLayers, flashAttention});
        return {ram: weights.cpuRam + context.cpuRam, vram: weights.gpuVram + context.gpuVram};
    };
    return {insights, bytes, gpu};
}

function fileBytes(file: string) {
    return fs.statSync(file).size;
}

/** A dtype variant's suffix (transformers.js' file names): `model_quantized.onnx` is `model.onnx` in another dtype. */
const dtypeSuffix = /_(quantized|fp16|fp32|int8|uint8|q4|q4f16|bnb4|q8)(?=\.onnx)/i;

/**
 * The ONNX weight files of a model file or folder (subfolders too, as a diffusion pipeline's `unet/`,
 * `vae_decoder/`). Of a file's dtype variants only the largest is counted: one of them is loaded.
 */
function onnxFilesBytes(modelPath: string, depth = 0): number {
    const stat = fs.statSync(modelPath);
    if (!stat.isDirectory())
        return stat.size;
    let bytes = 0;
    const largestVariant = new Map<string, number>();
    for (const item of fs.readdirSync(modelPath, {withFileTypes: true})) {
        const full = path.join(modelPath, item.name);
        if (item.isDirectory() && depth < 3)
            bytes += onnxFilesBytes(full, depth + 1);
        else if (item.isFile() && onnxWeightFile.test(item.name)) {
            const base = item.name.replace(dtypeSuffix, "");
            largestVariant.set(base, Math.max(largestVariant.get(base) ?? 0, fs.statSync(full).size));
        }
    }
    for (const size of largestVariant.values())
        bytes += size;
    return bytes;
}
