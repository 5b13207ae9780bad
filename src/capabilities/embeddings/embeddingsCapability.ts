import type { Capability } from "../Capability.js";
import type { EmbeddingsEngine } from "./EmbeddingsEngine.js";
import { embeddingsHandler } from "./embeddingsHandler.js";
import type { EmbeddingSettings } from "./embeddingsManifest.js";
import { embeddingsManifestPart } from "./embeddingsManifestPart.js";

/**
 * /v1/embeddings: ONNX models through transformers.js in the shared worker pool, GGUF embedding
 * models through node-llama-cpp's embedding context.
 */
export const embeddingsCapability: Capability<EmbeddingsEngine, EmbeddingSettings> = {
    ...embeddingsManifestPart,
    // One sequence whose batch is the whole input (LlamaEmbeddingsEngine), as long as the model was trained for at most.
    ggufContext(entry, _config, trainContextSize) {
        const contextSize = Math.min(entry.settings.maxInputTokens ?? trainContextSize ?? 2048, trainContextSize ?? 2048) + 1;
        return {contextSize, sequences: 1, batchSize: contextSize, isEmbeddingContext: true};
    },
    async createEngine(entry, {config, logger, workers, onLoadProgress}) {
        const settings = entry.settings;
        if (entry.path.toLowerCase().endsWith(".gguf")) {
            const {LlamaEmbeddingsEngine} = await import("./llama/LlamaEmbeddingsEngine.js");
            const {loadLlamaRuntime} = await import("../../runtimes/llama/llamaRuntime.js");
            return LlamaEmbeddingsEngine.load(await loadLlamaRuntime({build: config.llamaBuild, gpu: config.gpu}), {
                id: entry.id, modelPath: entry.path, maxInputTokens: settings.maxInputTokens,
                matryoshka: settings.matryoshka, normalize: settings.normalize,
                threads: entry.threads ?? config.threads, queueSize: config.queueSize, onLoadProgress
            });
        }
        const {OnnxEmbeddingsEngine} = await import("./onnx/OnnxEmbeddingsEngine.js");
        const {onnxModelSpec} = await import("./onnx/onnxModelSpec.js");
        return OnnxEmbeddingsEngine.load(workers(), entry.id, {
            spec: onnxModelSpec(entry.id, entry.path, settings, entry.threads ?? config.onnxThreads),
            maxInputTokens: settings.maxInputTokens, matryoshka: settings.matryoshka, normalize: settings.normalize,
            parallel: entry.parallel ?? config.parallel, queueSize: config.queueSize,
            onWarning: (message) => logger.warn(message),
            workers: entry.workers
        });
    },
    routes(router, context) {
        router.post("/embeddings", context.jsonBody, embeddingsHandler(context));
    }
};
