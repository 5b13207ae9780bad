import fs from "node:fs";
import type { Capability } from "../Capability.js";
import type { ModelEntry } from "../../core/registry/ModelEntry.js";
import type { ModelEstimate } from "../../core/engines/MemoryEstimate.js";
import type { Logger } from "../../logger.js";
import { chatApiError } from "./chatApiError.js";
import { chatCompletionsHandler } from "./chatCompletionsHandler.js";
import { maxChatJsonValues, maxConversationItems } from "./chatCompletionSchema.js";
import { completionsHandler } from "./completions/completionsHandler.js";
import { countTokensHandler } from "./messages/countTokensHandler.js";
import { messagesHandler } from "./messages/messagesHandler.js";
import { toAnthropicError } from "./messages/toAnthropicError.js";
import { ResponseStore } from "./responses/ResponseStore.js";
import { createResponseHandler } from "./responses/responsesHandlers.js";
import { deleteResponseHandler, inputItemsHandler, retrieveResponseHandler } from "./responses/storedResponseHandlers.js";
import type { ChatEngine } from "./ChatEngine.js";
import { chatManifestPart } from "./chatManifestPart.js";
import type { ChatSettings } from "./chatManifest.js";
import { speculativeOptions } from "./speculativeOptions.js";
import { detokenizeHandler, tokenizeHandler } from "./tokenize/tokenizeHandlers.js";
import { decisionsHandler, systemOneHandler } from "./decisions/decisionsHandlers.js";
import { constrainingModelIds } from "./vision/visionModels.js";

/**
 * The structured-output fields (chat's `response_format`, Responses' `text`, Messages' `output_config`) hold at most
 * this many JSON values, checked where the body is parsed: a schema the grammar takes (jsonSchemaLimits: 2,048 nodes,
 * 4,096 literal values) is far below it, and a 40,000-value enum never reaches the main thread (its rebuild there cost
 * 40-70 ms, most of it garbage collection), where checkJsonSchema would refuse it anyway.
 */
const structuredOutputValues = {response_format: 32_768, text: 32_768, output_config: 32_768};

/** Every chat-family route's conversation field (`messages`, or Responses' and Decisions' `input`) is bounded as its schema bounds it, checked where the body is parsed. */
const chatBodyBounds = {maxValues: maxChatJsonValues, maxItems: {messages: maxConversationItems, input: maxConversationItems}, maxFieldValues: structuredOutputValues};
/** Legacy completions' prompts (and detokenize's tokens) may be token ids, a value each: a prompt as long as a large context fits. */
const completionsBodyBounds = {maxValues: 1_000_000};

/** Tokens per sequence of a GGUF chat model: the manifest's `contextSize`, else `--context-size`; null = fitted (plannedContextSize). */
function contextSizeOf(entry: {contextSize?: number | null}, config: {contextSize: number}): number | null {
    return entry.contextSize ?? (config.contextSize > 0 ? config.contextSize : null);
}

/** Models whose fitted context was told in the log (once per model, not at every reload). */
const toldFitted = new WeakSet<ModelEntry>();

/**
 * The context of a GGUF chat model given no size: the one its memory estimate counted (the training context, or the
 * largest that fits the budget: fitWithin), said in the log when smaller than the training context; without an
 * estimate (an engine made outside a server), the training context.
 */
function plannedContextSize(entry: ModelEntry<ChatSettings>, sequences: number, estimate: ModelEstimate | undefined, logger: Logger): number | null {
    const {contextSize, trainContextSize} = estimate ?? {};
    if (contextSize == null)
        return null;
    if (trainContextSize != null && contextSize < trainContextSize && !toldFitted.has(entry)) {
        toldFitted.add(entry);
        logger.warn(`Model '${entry.id}': its training context (${trainContextSize} tokens a sequence) does not fit the memory budget (or the VRAM budget) at ${sequences} sequences; ` +
            `it gets ${contextSize}, the largest that fits. Set its manifest contextSize or --context-size to choose.`, {model: entry.id, context_size: contextSize, train_context_size: trainContextSize});
    }
    return contextSize;
}

/** /v1/chat/completions and the legacy /v1/completions (raw prompts, same engine), Responses, Messages, tokenize and detokenize on GGUF models through node-llama-cpp, in-process. */
export const chatCapability: Capability<ChatEngine, ChatSettings> = {
    ...chatManifestPart,
    // The draft model (speculative decoding) gets a context of the same shape as the model's (loadDraftModel).
    // Without a size set, the training context if it fits the memory budget, else the largest that does (ggufEstimate's fitWithin).
    ggufContext: (entry, config, trainContextSize) => {
        const set = contextSizeOf(entry, config);
        return {
            contextSize: set ?? trainContextSize ?? 4096, sequences: entry.parallel ?? config.parallel, gpuLayers: config.gpuLayers,
            companions: [speculativeOptions(entry.settings, config).draftModelPath].filter((file) => file != null),
            ...(set == null ? {fitWithin: {ram: config.memoryBudget, vram: config.vramBudget}} : {})
        };
    },
    // A GGUF chat model's memory is mostly its context's KV cache (a folder is an ONNX vision model: its files' size).
    memoryHint: (entry) => entry.path.toLowerCase().endsWith(".gguf")
        ? "Its estimate counts its context: tokens per sequence (the manifest's `contextSize`, else --context-size, else the model's training context, " +
            "or the largest that fits the budget, at least 4,096) times its sequences (--parallel)."
        : undefined,
    // node-llama-cpp is imported on first use, so a configuration error is reported without waiting for the native bindings.
    // A chat model given as a folder is an ONNX vision-language model (docs/vision.md), run in the worker pool.
    async createEngine(entry, {config, logger, runFiles, onLoadProgress, workers, registry, estimate}) {
        if ((await fs.promises.stat(entry.path)).isDirectory()) {
            const {OnnxVisionChatEngine} = await import("./vision/onnx/OnnxVisionChatEngine.js");
            return OnnxVisionChatEngine.load(workers(), {
                id: entry.id, path: entry.path, dtype: "fp32", parallel: entry.parallel ?? config.parallel, queueSize: config.queueSize, workers: entry.workers,
                constrainingModels: () => registry == null ? [] : constrainingModelIds(registry)
            });
        }
        const {LlamaChatEngine} = await import("./llama/LlamaChatEngine.js");
        const {loadLlamaRuntime} = await import("../../runtimes/llama/llamaRuntime.js");
        const runtime = await loadLlamaRuntime({build: config.llamaBuild, gpu: config.gpu});
        return LlamaChatEngine.load(runtime, {
            id: entry.id,
            modelPath: entry.path,
            contextSize: contextSizeOf(entry, config) ?? plannedContextSize(entry, entry.parallel ?? config.parallel, estimate, logger),
            threads: entry.threads ?? config.threads,
            parallel: entry.parallel ?? config.parallel,
            queueSize: config.queueSize,
            promptCache: config.promptCache,
            gpuLayers: config.gpuLayers,
            reasoning: config.reasoningFormat === "raw" ? "none" : entry.settings.reasoning,
            flashAttention: config.flashAttention === "auto" ? "auto" : config.flashAttention === "on",
            speculative: speculativeOptions(entry.settings, config),
            onLoadProgress,
            promptStates: runFiles == null ? undefined : {folder: () => runFiles.folder.path(), maxBytes: config.promptCacheDisk, closing: runFiles.closing, logger}
        });
    },
    routes(router, context) {
        const chatBody = context.jsonBodyWithin(chatBodyBounds);
        router.post("/chat/completions", chatBody, chatCompletionsHandler(context));
        router.post("/completions", context.jsonBodyWithin(completionsBodyBounds), completionsHandler(context));
        // OpenAI's Responses API on the same engine, with a store for previous_response_id bounded per key.
        const store = new ResponseStore({maxResponses: 1000, maxBytes: context.config.responseStoreMb * 1024 * 1024});
        router.post("/responses", chatBody, createResponseHandler(context, store));
        router.get("/responses/:id", retrieveResponseHandler(store));
        router.delete("/responses/:id", deleteResponseHandler(store));
        router.get("/responses/:id/input_items", inputItemsHandler(store));
        // Anthropic's Messages API on the same engine (its errors in Anthropic's shape: errorShapes below).
        router.post("/messages", chatBody, messagesHandler(context));
        router.post("/messages/count_tokens", chatBody, countTokensHandler(context));
        // Tokenize and detokenize (llama-server's and vLLM's shapes in one body), also at their own /tokenize and /detokenize.
        const tokenize = tokenizeHandler(context);
        const detokenize = detokenizeHandler(context);
        const tokensBody = context.jsonBodyWithin(completionsBodyBounds);
        for (const target of [router, context.rootRouter]) {
            target.post("/tokenize", chatBody, tokenize);
            target.post("/detokenize", tokensBody, detokenize);
        }
        // Decision questions answered from the next-token distribution: OpenAI's Decisions API and TypeSafe's System One format.
        router.post("/decisions", chatBody, decisionsHandler(context));
        router.post("/systemone", chatBody, systemOneHandler(context));
    },
    toApiError: chatApiError,
    errorShapes: {"/v1/messages": toAnthropicError, "/v1/messages/count_tokens": toAnthropicError}
};
