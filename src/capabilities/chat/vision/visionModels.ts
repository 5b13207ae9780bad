import type { ModelRegistry } from "../../../core/registry/ModelRegistry.js";

/**
 * The served chat models that take images, for a text-only model's refusal: the chat entries that are not GGUF files
 * (node-llama-cpp, the text engine, loads only those; a chat model given as a folder is an ONNX vision-language model).
 */
export function visionModelIds(registry: ModelRegistry): string[] {
    return chatModelIds(registry, false);
}

/**
 * The served chat models that constrain their output (JSON mode, `json_schema`, forced tool calls: node-llama-cpp's
 * grammars), for the vision engine's refusal: the chat entries that are GGUF files.
 */
export function constrainingModelIds(registry: ModelRegistry): string[] {
    return chatModelIds(registry, true);
}

function chatModelIds(registry: ModelRegistry, gguf: boolean): string[] {
    return registry.entries.filter((entry) => entry.task === "chat" && /\.gguf$/i.test(entry.path) === gguf).map((entry) => entry.id);
}
