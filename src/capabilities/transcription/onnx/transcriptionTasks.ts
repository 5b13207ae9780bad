/**
 * The transcription capability's task module, run in the shared worker pool: uploaded files decoded
 * (media/audio/decodeAudio) and Whisper models through transformers.js (ONNX Runtime), loaded once
 * per worker and kept. Decoding runs here too, so nothing heavy runs on the main thread.
 */
import { env } from "@huggingface/transformers";
import { transferable } from "../../../core/workers/transferable.js";
import type { TaskContext, TaskModule } from "../../../core/workers/WorkerTask.js";
import { decodeAudio, UndecodableAudioError } from "../../../media/audio/decodeAudio.js";
import type { DecodeFailure, DecodedAudio, TranscribeResult, TranscribeTask, WhisperModelDescription, WhisperModelSpec, WindowProgress } from "./transcriptionWorkerProtocol.js";
import { WhisperModel, whisperSampleRate } from "./WhisperModel.js";

// Fully offline: only the manifest's folders, never the hub.
env.allowRemoteModels = false;
env.allowLocalModels = true;
env.useFSCache = false;
env.useBrowserCache = false;

const models = new Map<string, Promise<WhisperModel>>();

function loaded(spec: WhisperModelSpec): Promise<WhisperModel> {
    let model = models.get(spec.key);
    if (model == null) {
        model = WhisperModel.load(spec);
        models.set(spec.key, model);
        model.catch(() => models.delete(spec.key));
    }
    return model;
}

export const tasks = {
    describe: async (spec: WhisperModelSpec): Promise<WhisperModelDescription> => (await loaded(spec)).description,
    /** The file's audio as Whisper takes it (mono, 16 kHz), or why it cannot be read. */
    decode: async (bytes: Uint8Array): Promise<DecodedAudio | DecodeFailure> => {
        try {
            const {samples} = await decodeAudio(bytes, whisperSampleRate);
            const decoded: DecodedAudio = {samples, seconds: samples.length / whisperSampleRate};
            return transferable(decoded, [samples.buffer as ArrayBuffer]);
        } catch (error) {
            if (error instanceof UndecodableAudioError)
                return {error: error.message};
            // The decoders' own exceptions on damaged data (WebAssembly aborts, bad headers).
            return {error: `The audio data could not be decoded (${(error as Error).message}).`};
        }
    },
    transcribe: async (task: TranscribeTask, context: TaskContext<WindowProgress>): Promise<TranscribeResult> =>
        (await loaded(task.model)).transcribe(task, context),
    /** Frees the model's sessions in this worker (the last engine using it was disposed). */
    release: async (spec: WhisperModelSpec) => {
        const model = models.get(spec.key);
        models.delete(spec.key);
        await (await model?.catch(() => null))?.dispose();
    }
} satisfies TaskModule;
