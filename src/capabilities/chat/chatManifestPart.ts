import type { CapabilityManifest } from "../CapabilityManifest.js";

/** The chat task (/v1/chat/completions and the legacy /v1/completions on GGUF models): what the manifest loader and the downloader know of it. */
export const chatManifestPart = {
    task: "chat" as const,
    endpoints: ["/v1/chat/completions", "/v1/completions", "/v1/responses", "/v1/messages"]
} satisfies CapabilityManifest;
