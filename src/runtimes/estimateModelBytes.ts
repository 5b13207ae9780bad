import fs from "node:fs";
import path from "node:path";
import type { ModelEntry } from "../core/registry/ModelEntry.js";
import type { GpuSetting, LlamaBuildSetting } from "../settings/serverSettings.js";

/** The server settings an estimate depends on (the server's Config has them all). */
export type EstimateSettings = {
    /** The worker pool's size: an ONNX model's copies, unless the manifest entry's `workers` says fewer. */
    workers: number;
    flashAttention: "on" | "off" | "auto";
    llamaBuild: LlamaBuildSetting;
    gpu: GpuSetting;
};

/**
 * The context a GGUF model's engine will create (its capability says: a chat context, an embedding context), and the
 * other GGUF files it loads beside the model, each with a context of the same shape (a chat model's draft model).
 */
export type GgufContextShape = {contextSize: number, sequences: number, batchSize?: number, isEmbeddingContext?: boolean, companions?: readonly string[]};

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
 * Bytes a model will take in RAM once loaded, estimated before loading it:
 * - GGUF: node-llama-cpp's own estimator (GgufInsights) for the weights and for the context the engine will
 *   create (`contextOf`: the model's capability says its shape; flash attention as the server sets it), and the same
 *   for the files it loads beside it (a draft model, with a context of the same shape). Every layer
 *   is counted in RAM: exact on the CPU, an upper bound when layers go to a GPU.
 * - ONNX: the weight files' sizes times the copies the worker
 *   placement makes (manifest `workers`, default every worker of the pool).
 * Both plus a margin. A GGUF whose header cannot be read is estimated from its file size (its load will say what is wrong).
 */
export async function estimateModelBytes(entry: ModelEntry, config: EstimateSettings, contextOf: GgufContextOf = defaultGgufContext): Promise<number> {
    const raw = entry.path.toLowerCase().endsWith(".gguf")
        ? await estimateGguf(entry, config, contextOf).catch(() => fileBytes(entry.path))
        : onnxFilesBytes(entry.path) * Math.min(entry.workers ?? config.workers, config.workers);
    return Math.round(raw * (1 + marginShare) + marginBytes);
}

async function estimateGguf(entry: ModelEntry, config: EstimateSettings, contextOf: GgufContextOf): Promise<number> {
    const {insights, bytes} = await ggufInsights(entry.path, config);
    const shape = contextOf(entry, insights.trainContextSize);
    let total = bytes(shape);
    for (const companion of shape.companions ?? [])
        total += await ggufInsights(companion, config).then(({bytes: companionBytes}) => companionBytes(shape), () => fileBytes(companion));
    return total;
}

/** A GGUF file's insights, and the bytes its weights and a context of a given shape take (every layer in RAM). */
async function ggufInsights(file: string, config: EstimateSettings) {
    const {readGgufFileInfo, GgufInsights} = await import("node-llama-cpp");
    const {loadLlamaRuntime} = await import("./llama/llamaRuntime.js");
    const info = await readGgufFileInfo(file, {logWarnings: false});
    const insights = await GgufInsights.from(info, await loadLlamaRuntime({build: config.llamaBuild, gpu: config.gpu}));
    const bytes = ({companions: _companions, ...shape}: GgufContextShape) => {
        const weights = insights.estimateModelResourceRequirements({gpuLayers: 0});
        const context = insights.estimateContextResourceRequirements({
            ...shape,
            modelGpuLayers: 0,
            flashAttention: config.flashAttention !== "off" && insights.flashAttentionSupported
        });
        return weights.cpuRam + weights.gpuVram + context.cpuRam + context.gpuVram;
    };
    return {insights, bytes};
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
