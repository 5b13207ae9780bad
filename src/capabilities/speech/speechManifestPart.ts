import type { CapabilityManifest } from "../CapabilityManifest.js";
import { speechManifest, type SpeechSettings } from "./speechManifest.js";

/** The speech task (/v1/audio/speech on Kokoro and VITS ONNX folders): what the manifest loader and the downloader know of it. */
export const speechManifestPart = {
    task: "speech" as const,
    endpoints: ["/v1/audio/speech"],
    manifest: speechManifest,
    // MMS-TTS (vits) and Kokoro's ONNX export (style_text_to_speech_2).
    recognise: {modelTypes: ["vits", "style_text_to_speech_2", "kokoro"], pipelineTags: ["text-to-speech", "text-to-audio"]}
} satisfies CapabilityManifest<SpeechSettings>;
