import type { Capability } from "../Capability.js";
import type { RerankEngine } from "./RerankEngine.js";
import { rerankHandler } from "./rerankHandler.js";
import type { RerankSettings } from "./rerankManifest.js";
import { rerankManifestPart } from "./rerankManifestPart.js";

/**
 * /v1/rerank (also /rerank and /v2/rerank, the paths Jina's, Cohere's and llama-server's clients call): GGUF
 * rerankers through node-llama-cpp's ranking context, ONNX cross-encoders through transformers.js in the shared
 * worker pool.
 */
export const rerankCapability: Capability<RerankEngine, RerankSettings> = {
    ...rerankManifestPart,
    // One sequence whose batch is a whole pair (LlamaRerankEngine), as long as the model was trained for at most.
    ggufContext(entry, _config, trainContextSize) {
        const contextSize = Math.min(entry.settings.maxInputTokens ?? trainContextSize ?? 512, trainContextSize ?? 512) + 1;
        return {contextSize, sequences: 1, batchSize: contextSize, isEmbeddingContext: true};
    },
    async createEngine(entry, {config, logger, workers, onLoadProgress}) {
        const settings = entry.settings;
        if (entry.path.toLowerCase().endsWith(".gguf")) {
            const {LlamaRerankEngine} = await import("./llama/LlamaRerankEngine.js");
            const {loadLlamaRuntime} = await import("../../runtimes/llama/llamaRuntime.js");
            return LlamaRerankEngine.load(await loadLlamaRuntime({build: config.llamaBuild, gpu: config.gpu}), {
                id: entry.id, modelPath: entry.path, maxInputTokens: settings.maxInputTokens,
                threads: entry.threads ?? config.threads, queueSize: config.queueSize, onLoadProgress
            });
        }
        const {OnnxRerankEngine} = await import("./onnx/OnnxRerankEngine.js");
        const {onnxModelFile} = await import("../../runtimes/onnx/onnxModelFile.js");
        return OnnxRerankEngine.load(workers(), entry.id, {
            spec: {key: `${entry.id}:${entry.path}`, folder: entry.path, threads: entry.threads ?? config.onnxThreads,
                ...onnxModelFile(`Rerank model '${entry.id}'`, entry.path, settings)},
            maxInputTokens: settings.maxInputTokens,
            parallel: entry.parallel ?? config.parallel, queueSize: config.queueSize,
            onWarning: (message) => logger.warn(message),
            workers: entry.workers
        });
    },
    routes(router, context) {
        const handler = rerankHandler(context);
        router.post("/rerank", context.jsonBody, handler);
        // Jina's and llama-server's clients also call /rerank, Cohere's v2 client /v2/rerank: the key as /v1's.
        context.rootRouter.post("/rerank", context.jsonBody, handler);
        context.rootRouter.post("/v2/rerank", context.jsonBody, handler);
    }
};
