/**
 * The transcription capability's task module, run in the shared worker pool: uploaded files decoded
 * (media/audio/decodeAudio) and Whisper models through transformers.js (ONNX Runtime), loaded once
 * per worker and kept. Decoding runs here too, so nothing heavy runs on the main thread.
 */
import { env } from "@huggingface/transformers";
import { transferable } from "../../../core/workers/transferable.js";
import type { TaskContext, TaskModule } from "../../../core/workers/WorkerTask.js";
import { TaskCancelledError } from "../../../core/workers/TaskCancelledError.js";
import { AudioTooLongError, SampleRateError, UndecodableAudioError } from "../../../media/audio/decode/audioRefusals.js";
import { decodeAudio } from "../../../media/audio/decodeAudio.js";
import type {
    DecodeFailure, DecodedAudio, DecodeTask, TranscribeResult, TranscribeTask, WhisperModelDescription, WhisperModelSpec, WindowProgress
} from "./transcriptionWorkerProtocol.js";
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
    /**
     * The file's audio as Whisper takes it (mono, 16 kHz), or why it is refused. Decoded a piece at a time,
     * with the request's cancel flag checked between pieces: a client that leaves frees the worker at once.
     */
    decode: async ({file, maxSeconds}: DecodeTask, context: TaskContext): Promise<DecodedAudio | DecodeFailure> => {
        try {
            const {samples} = await decodeAudio(file, whisperSampleRate, {maxSeconds, checkpoint: () => context.throwIfCancelled()});
            const decoded: DecodedAudio = {samples, seconds: samples.length / whisperSampleRate};
            return transferable(decoded, [samples.buffer as ArrayBuffer]);
        } catch (error) {
            if (error instanceof TaskCancelledError)
                throw error;
            return decodeFailure(error);
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

function decodeFailure(error: unknown): DecodeFailure {
    if (error instanceof AudioTooLongError)
        return {error: error.message, code: "audio_too_long"};
    if (error instanceof SampleRateError)
        return {error: error.message, code: "unsupported_sample_rate"};
    if (error instanceof UndecodableAudioError)
        return {error: error.message, code: "invalid_file_format"};
    // The decoders' own exceptions on damaged data (WebAssembly aborts, bad headers).
    return {error: `The audio data could not be decoded (${(error as Error).message}).`, code: "invalid_file_format"};
}
