import type { EngineLoad } from "../../../core/engines/EngineLoad.js";
import type { ModelEntry } from "../../../core/registry/ModelEntry.js";
import type { WorkerPool } from "../../../core/workers/WorkerPool.js";
import { ownedPieces } from "../../../core/workers/ownedPieces.js";
import { PlacedModel } from "../../../runtimes/onnx/PlacedModel.js";
import type { TranscriptionEngine, TranscriptionJob, TranscriptionOptions, TranscriptionResult } from "../TranscriptionEngine.js";
import { AudioFileRefusedError } from "../TranscriptionEngine.js";
import type { TranscriptionSettings } from "../transcriptionManifest.js";
import { transcriptionTaskHandles } from "./transcriptionTaskHandles.js";
import type { WhisperModelDescription, WhisperModelSpec, WindowProgress } from "./transcriptionWorkerProtocol.js";
import { whisperModelSpec } from "./whisperModelSpec.js";

export type OnnxTranscriptionEngineOptions = {
    threads: number, parallel: number, queueSize: number,
    /** The longest audio a request may decode to (`--max-audio-seconds`). */
    maxAudioSeconds: number,
    /** How many of the pool's workers load the model (manifest `workers`); default all. */
    workers?: number
};

/**
 * A Whisper model run in the shared worker pool (task module `transcriptionTasks.ts`): a request is
 * one `transcribe` task that decodes the file (to 16 kHz mono, at most `maxAudioSeconds` of it) and
 * sends each 30 s window's segments as they are done. `parallel` requests run at once, `queueSize`
 * more wait, beyond that QueueFullError.
 */
export class OnnxTranscriptionEngine implements TranscriptionEngine {
    readonly id: string;
    readonly multilingual: boolean;
    readonly languages: readonly string[];
    readonly wordTimestamps: boolean;

    private constructor(private readonly model: PlacedModel<WhisperModelSpec, WhisperModelDescription>,
        private readonly decoding: {temperatureFallback: boolean, conditionOnPreviousText: boolean}, private readonly maxAudioSeconds: number) {
        this.id = model.id;
        ({multilingual: this.multilingual, languages: this.languages, wordTimestamps: this.wordTimestamps} = model.described);
    }

    /** Loads the model in every worker of its placement (a client's first request should not pay the load). */
    static load(pool: WorkerPool, entry: ModelEntry<TranscriptionSettings>, options: OnnxTranscriptionEngineOptions): Promise<OnnxTranscriptionEngine> {
        const spec = whisperModelSpec(entry.id, entry.path, entry.settings, options.threads);
        const {temperatureFallback, conditionOnPreviousText} = entry.settings;
        return PlacedModel.place(pool, {...options, id: entry.id, spec, tasks: transcriptionTaskHandles, preload: "each"},
            (model) => new OnnxTranscriptionEngine(model, {temperatureFallback, conditionOnPreviousText}, options.maxAudioSeconds));
    }

    load(): EngineLoad {
        return this.model.load();
    }

    describe() {
        return {multilingual: this.multilingual, languages: this.languages.length, maxWindowTokens: this.model.described.maxWindowTokens, wordTimestamps: this.wordTimestamps};
    }

    transcribe(job: TranscriptionJob, options: TranscriptionOptions): Promise<TranscriptionResult> {
        return this.model.admit(options.signal, () => this.run(job, options));
    }

    private async run(job: TranscriptionJob, {signal, onSegments}: TranscriptionOptions): Promise<TranscriptionResult> {
        const file = ownedPieces(job.file);
        const onProgress = ({segments, processedSeconds, totalSeconds}: WindowProgress) => onSegments?.(segments, processedSeconds, totalSeconds);
        const outcome = await this.model.run(transcriptionTaskHandles.transcribe, {
            model: this.model.spec, file: file.pieces, maxSeconds: this.maxAudioSeconds, task: job.task, language: job.language, prompt: job.prompt,
            temperature: job.temperature, ...this.decoding, logprobs: job.logprobs, wordTimestamps: job.wordTimestamps
        }, {signal, onProgress, transfer: file.transfer});
        if ("error" in outcome)
            throw new AudioFileRefusedError(outcome.error, outcome.code);
        return outcome;
    }

    /** Refuses new requests, lets the admitted ones finish, then frees the model in its workers (once no other entry uses it). */
    dispose(): Promise<void> {
        return this.model.dispose();
    }
}
