import type { CapabilityManifest } from "../CapabilityManifest.js";
import { transcriptionManifest, type TranscriptionSettings } from "./transcriptionManifest.js";
import { transcriptionServerSettings } from "./transcriptionServerSettings.js";

/** The transcription task (Whisper ONNX folders): what the manifest loader and the downloader know of it. */
export const transcriptionManifestPart = {
    task: "transcription" as const,
    endpoints: ["/v1/audio/transcriptions", "/v1/audio/translations"],
    manifest: transcriptionManifest,
    settings: transcriptionServerSettings,
    recognise: {modelTypes: ["whisper"], pipelineTags: ["automatic-speech-recognition"]}
} satisfies CapabilityManifest<TranscriptionSettings>;
