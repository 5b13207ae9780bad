import type { Capability } from "../Capability.js";
import { chatApiError } from "./chatApiError.js";
import { chatCompletionsHandler } from "./chatCompletionsHandler.js";
import { completionsHandler } from "./completions/completionsHandler.js";
import type { ChatEngine } from "./ChatEngine.js";
import { chatManifestPart } from "./chatManifestPart.js";

/** /v1/chat/completions and the legacy /v1/completions (raw prompts, same engine) on GGUF models through node-llama-cpp, in-process. */
export const chatCapability: Capability<ChatEngine> = {
    ...chatManifestPart,
    // node-llama-cpp is imported on first use, so a configuration error is reported without waiting for the native bindings.
    async createEngine(entry, {config}) {
        const {LlamaChatEngine} = await import("./llama/LlamaChatEngine.js");
        const {loadLlamaRuntime} = await import("../../runtimes/llama/llamaRuntime.js");
        return LlamaChatEngine.load(await loadLlamaRuntime({build: config.llamaBuild, gpu: config.gpu}), {
            id: entry.id,
            modelPath: entry.path,
            contextSize: entry.contextSize,
            threads: entry.threads ?? config.threads,
            parallel: entry.parallel ?? config.parallel,
            queueSize: config.queueSize,
            promptCache: config.promptCache,
            gpuLayers: config.gpuLayers,
            flashAttention: config.flashAttention === "auto" ? "auto" : config.flashAttention === "on"
        });
    },
    routes(router, context) {
        router.post("/chat/completions", context.jsonBody, chatCompletionsHandler(context));
        router.post("/completions", context.jsonBody, completionsHandler(context));
    },
    toApiError: chatApiError
};
