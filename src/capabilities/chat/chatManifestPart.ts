import type { CapabilityManifest } from "../CapabilityManifest.js";
import { chatManifest, type ChatSettings } from "./chatManifest.js";
import { chatServerSettings } from "./chatServerSettings.js";
import { takesImages } from "./vision/visionModels.js";

/** The chat task (chat completions, completions, the Responses and Messages APIs, tokenize and detokenize on GGUF models): what the manifest loader and the downloader know of it. */
export const chatManifestPart = {
    task: "chat" as const,
    endpoints: ["/v1/chat/completions", "/v1/completions", "/v1/responses", "/v1/messages", "/v1/tokenize", "/v1/detokenize", "/v1/decisions", "/v1/systemone"],
    manifest: chatManifest,
    settings: chatServerSettings,
    // A vision-language model (a chat folder) takes images as well as text.
    modalities: (entry) => ({input: takesImages(entry) ? ["text", "image"] : ["text"], output: ["text"]}),
    // Any causal language model llama.cpp loads: every GGUF that no other capability claims; and the ONNX
    // vision-language models the vision engine runs (SmolVLM / Idefics3 folders, docs/vision.md).
    recognise: {
        anyOtherGguf: true, pipelineTags: ["text-generation", "image-text-to-text", "text2text-generation"],
        architectures: ["SmolVLMForConditionalGeneration", "Idefics3ForConditionalGeneration"], modelTypes: ["smolvlm", "idefics3"]
    }
} satisfies CapabilityManifest<ChatSettings>;
