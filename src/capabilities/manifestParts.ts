import { chatManifestPart } from "./chat/chatManifestPart.js";
import { embeddingsManifestPart } from "./embeddings/embeddingsManifestPart.js";
import { imagesManifestPart } from "./images/imagesManifestPart.js";
import { speechManifestPart } from "./speech/speechManifestPart.js";
import { transcriptionManifestPart } from "./transcription/transcriptionManifestPart.js";

/**
 * The manifest part of every capability in `capabilities.ts`, in the same order (a test keeps the two
 * lists in step): what the manifest loader and the downloader import, without any server code.
 */
export const manifestParts = [chatManifestPart, embeddingsManifestPart, imagesManifestPart, speechManifestPart, transcriptionManifestPart] as const;

/** A task this server serves. */
export type ServedTask = typeof manifestParts[number]["task"];
