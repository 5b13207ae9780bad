import { ApiError } from "../../core/http/ApiError.js";
import type { Capability } from "../Capability.js";
import { AudioFileRefusedError, type TranscriptionEngine } from "./TranscriptionEngine.js";
import { transcriptionHandler } from "./transcriptionHandler.js";
import type { TranscriptionSettings } from "./transcriptionManifest.js";
import { transcriptionManifestPart } from "./transcriptionManifestPart.js";

/** OpenAI's limit on audio uploads. */
const maxFileBytes = 25 * 1024 * 1024;
const uploadLimits = {maxFileBytes, maxFiles: 1, maxFields: 32, maxFieldsBytes: 64 * 1024};

/**
 * /v1/audio/transcriptions and /v1/audio/translations: Whisper ONNX models through transformers.js in
 * the shared worker pool; uploads decoded in-process (media/audio/decodeAudio: wav, mp3, flac, ogg opus and vorbis, webm opus).
 */
export const transcriptionCapability: Capability<TranscriptionEngine, TranscriptionSettings> = {
    ...transcriptionManifestPart,
    async createEngine(entry, {config, workers}) {
        const {OnnxTranscriptionEngine} = await import("./onnx/OnnxTranscriptionEngine.js");
        return OnnxTranscriptionEngine.load(workers(), entry, {
            threads: entry.threads ?? config.onnxThreads,
            parallel: entry.parallel ?? config.parallel,
            queueSize: config.queueSize,
            maxAudioSeconds: config.maxAudioSeconds,
            workers: entry.workers
        });
    },
    routes(router, context) {
        const upload = context.multipartBody(uploadLimits);
        router.post("/audio/transcriptions", upload, transcriptionHandler(context, "transcribe"));
        router.post("/audio/translations", upload, transcriptionHandler(context, "translate"));
    },
    toApiError(error) {
        if (error instanceof AudioFileRefusedError) {
            if (error.code === "invalid_file_format")
                return ApiError.invalidRequest(`Could not decode the uploaded 'file': ${error.message}`, "file", error.code);
            const reason = error.message.charAt(0).toLowerCase() + error.message.slice(1).replace(/\.$/u, "");
            return ApiError.invalidRequest(`The uploaded 'file' is refused: ${reason}${error.code === "audio_too_long" ? " (the server's --max-audio-seconds)" : ""}.`, "file", error.code);
        }
        return undefined;
    }
};
