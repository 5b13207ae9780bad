import { ApiError } from "../../core/http/ApiError.js";
import { NothingToSpeakError } from "./errors/NothingToSpeakError.js";
import { UnknownVoiceError } from "./errors/UnknownVoiceError.js";
import type { Capability } from "../Capability.js";
import type { SpeechEngine } from "./SpeechEngine.js";
import { speechHandler } from "./speechHandler.js";
import type { SpeechSettings } from "./speechManifest.js";
import { speechManifestPart } from "./speechManifestPart.js";
import { voicesHandler } from "./voicesHandler.js";

/**
 * /v1/audio/speech and /v1/audio/voices: Kokoro and VITS ONNX models through transformers.js in
 * the shared worker pool; every OpenAI format encoded in-process (audio/).
 */
export const speechCapability: Capability<SpeechEngine, SpeechSettings> = {
    ...speechManifestPart,
    async createEngine(entry, {config, logger, workers}) {
        const {OnnxSpeechEngine} = await import("./onnx/OnnxSpeechEngine.js");
        return OnnxSpeechEngine.load(workers(), entry, {
            threads: entry.threads ?? config.onnxThreads,
            parallel: entry.parallel ?? config.parallel,
            queueSize: config.queueSize,
            onWarning: (message) => logger.warn(message),
            workers: entry.workers
        });
    },
    // The capability's one error mapping: its engines' errors as the client sees them.
    toApiError(error) {
        if (error instanceof UnknownVoiceError)
            return ApiError.invalidRequest(error.message, "voice");
        if (error instanceof NothingToSpeakError)
            return ApiError.invalidRequest(error.message, "input");
        return undefined;
    },
    routes(router, context) {
        router.post("/audio/speech", context.jsonBody, speechHandler(context));
        router.get("/audio/voices", voicesHandler(context));
    }
};
