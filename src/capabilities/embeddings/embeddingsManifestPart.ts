import type { CapabilityManifest } from "../CapabilityManifest.js";
import { embeddingsManifest, type EmbeddingSettings } from "./embeddingsManifest.js";

/** The embeddings task (/v1/embeddings on ONNX and GGUF embedding models): what the manifest loader and the downloader know of it. */
export const embeddingsManifestPart = {
    task: "embeddings" as const,
    endpoints: ["/v1/embeddings"],
    manifest: embeddingsManifest
} satisfies CapabilityManifest<EmbeddingSettings>;
