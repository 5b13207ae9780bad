/**
 * The transcription capability's task module, run in the shared worker pool: Whisper models through
 * transformers.js (ONNX Runtime), loaded once per worker and kept. One request is one task: the uploaded
 * file decoded (media/audio/decodeAudio) and transcribed in the same worker, so nothing heavy runs on the
 * main thread and the decoded samples never cross back to it.
 */
import type { TaskContext, TaskModule } from "../../../core/workers/WorkerTask.js";
import { TaskCancelledError } from "../../../core/workers/TaskCancelledError.js";
import { AudioTooLongError, SampleRateError, UndecodableAudioError } from "../../../media/audio/decode/audioRefusals.js";
import { decodeAudio } from "../../../media/audio/decodeAudio.js";
import { joinPieces } from "../../../core/workers/ownedPieces.js";
import { WorkerModelCache } from "../../../runtimes/onnx/WorkerModelCache.js";
import type { DecodeFailure, TranscribeOutcome, TranscribeTask, WhisperModelDescription, WhisperModelSpec, WindowProgress } from "./transcriptionWorkerProtocol.js";
import { WhisperModel, whisperSampleRate } from "./WhisperModel.js";

const models = new WorkerModelCache<WhisperModelSpec, WhisperModel>(WhisperModel.load, (model) => model.dispose());

export const tasks = {
    describe: async (spec: WhisperModelSpec): Promise<WhisperModelDescription> => (await models.get(spec)).description,
    /**
     * The file decoded to Whisper's input (mono, 16 kHz) a piece at a time, with the request's cancel flag
     * checked between pieces (a client that leaves frees the worker at once), then transcribed; or why the
     * file is refused.
     */
    transcribe: async (task: TranscribeTask, context: TaskContext<WindowProgress>): Promise<TranscribeOutcome> => {
        let samples: Float32Array;
        try {
            ({samples} = await decodeAudio(joinPieces(task.file), whisperSampleRate, {maxSeconds: task.maxSeconds, checkpoint: () => context.throwIfCancelled()}));
        } catch (error) {
            if (error instanceof TaskCancelledError)
                throw error;
            return decodeFailure(error);
        }
        return (await models.get(task.model)).transcribe(samples, task, context);
    },
    /** Frees the model's sessions in this worker (the last engine using it was disposed). */
    release: (spec: WhisperModelSpec) => models.release(spec)
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
