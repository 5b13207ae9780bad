import type { ModelEntry } from "../../../core/registry/ModelEntry.js";
import type { ModelRegistry } from "../../../core/registry/ModelRegistry.js";

/**
 * Whether a chat model takes images: a chat model given as a folder rather than a GGUF file (node-llama-cpp, the text
 * engine, loads only files; a chat folder is an ONNX vision-language model, served by the vision engine).
 */
export function takesImages(entry: Pick<ModelEntry, "task" | "path">): boolean {
    return entry.task === "chat" && !/\.gguf$/i.test(entry.path);
}

/** The served chat models that take images, for a text-only model's refusal. */
export function visionModelIds(registry: ModelRegistry): string[] {
    return registry.entries.filter(takesImages).map((entry) => entry.id);
}

/**
 * The served chat models that constrain their output (JSON mode, `json_schema`, forced tool calls: node-llama-cpp's
 * grammars), for the vision engine's refusal: the chat entries that are GGUF files.
 */
export function constrainingModelIds(registry: ModelRegistry): string[] {
    return registry.entries.filter((entry) => entry.task === "chat" && !takesImages(entry)).map((entry) => entry.id);
}
