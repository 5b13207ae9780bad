import type { Capability } from "./Capability.js";
import { chatManifestPart } from "./chat/chatManifestPart.js";
import { embeddingsManifestPart } from "./embeddings/embeddingsManifestPart.js";
import { imagesManifestPart } from "./images/imagesManifestPart.js";
import { rerankManifestPart } from "./rerank/rerankManifestPart.js";
import { speechManifestPart } from "./speech/speechManifestPart.js";
import { transcriptionManifestPart } from "./transcription/transcriptionManifestPart.js";

/**
 * Everything the server does, one line per capability: a new capability is a folder beside these and one line
 * here. Each line names the capability's manifest part (its task, endpoints and manifest fields: what the
 * manifest loader and the downloader import) and how to load its server part (handlers, engine, codecs: imported
 * only when the server starts, by `loadCapabilities`).
 */
export const capabilityList = [
    {manifest: chatManifestPart, server: async () => (await import("./chat/chatCapability.js")).chatCapability as Capability},
    {manifest: embeddingsManifestPart, server: async () => (await import("./embeddings/embeddingsCapability.js")).embeddingsCapability as Capability},
    {manifest: imagesManifestPart, server: async () => (await import("./images/imagesCapability.js")).imagesCapability as Capability},
    {manifest: rerankManifestPart, server: async () => (await import("./rerank/rerankCapability.js")).rerankCapability as Capability},
    {manifest: speechManifestPart, server: async () => (await import("./speech/speechCapability.js")).speechCapability as Capability},
    {manifest: transcriptionManifestPart, server: async () => (await import("./transcription/transcriptionCapability.js")).transcriptionCapability as Capability}
] as const;
