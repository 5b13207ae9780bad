import fs from "node:fs";
import path from "node:path";
import { AdmissionQueue } from "../../../core/admission/AdmissionQueue.js";
import { EngineDisposedError } from "../../../core/engines/EngineDisposedError.js";
import type { EngineLoad } from "../../../core/engines/EngineLoad.js";
import type { ModelEntry } from "../../../core/registry/ModelEntry.js";
import type { Placement, WorkerPool } from "../../../core/workers/WorkerPool.js";
import type { TranscriptionEngine, TranscriptionJob, TranscriptionOptions, TranscriptionResult } from "../TranscriptionEngine.js";
import { AudioFileRefusedError } from "../TranscriptionEngine.js";
import type { TranscriptionSettings } from "../transcriptionManifest.js";
import { transcriptionTaskHandles } from "./transcriptionTaskHandles.js";
import type { WhisperModelDescription, WhisperModelSpec, WindowProgress } from "./transcriptionWorkerProtocol.js";

export type OnnxTranscriptionEngineOptions = {
    threads: number, parallel: number, queueSize: number,
    /** The longest audio a request may decode to (`--max-audio-seconds`). */
    maxAudioSeconds: number,
    /** How many of the pool's workers load the model (manifest `workers`); default all. */
    workers?: number
};

/** File name suffix of each transformers.js dtype, in the order a folder is searched when the manifest names none. */
const suffixByDtype: [string, string][] = [["q8", "_quantized"], ["fp32", ""], ["fp16", "_fp16"], ["int8", "_int8"], ["uint8", "_uint8"], ["q4", "_q4"], ["q4f16", "_q4f16"], ["bnb4", "_bnb4"]];

/** Which files a Whisper folder is loaded from: the manifest's dtype, else the first dtype whose encoder and merged decoder both exist. */
export function whisperModelSpec(id: string, folder: string, settings: TranscriptionSettings, threads: number): WhisperModelSpec {
    const onnx = path.join(folder, "onnx");
    const has = (suffix: string) => ["encoder_model", "decoder_model_merged"].every((name) => fs.existsSync(path.join(onnx, `${name}${suffix}.onnx`)));
    const dtype = settings.dtype ?? suffixByDtype.find(([, suffix]) => has(suffix))?.[0];
    if (dtype == null)
        throw new Error(`Transcription model '${id}': ${onnx} has no encoder_model.onnx and decoder_model_merged.onnx pair (nor _quantized, _fp16, ... variants).`);
    const suffix = suffixByDtype.find(([name]) => name === dtype)?.[1] ?? "";
    if (!has(suffix))
        throw new Error(`Transcription model '${id}': dtype '${dtype}' needs onnx/encoder_model${suffix}.onnx and onnx/decoder_model_merged${suffix}.onnx in ${folder}.`);
    return {key: `${folder}:${dtype}:${threads}`, folder, dtype, threads};
}

/**
 * A Whisper model run in the shared worker pool (task module `transcriptionTasks.ts`): a request is
 * one `decode` task (the file to 16 kHz mono, at most `maxAudioSeconds` of it) and one `transcribe` task that sends each 30 s window's
 * segments as they are done. `parallel` requests run at once, `queueSize` more wait, beyond that QueueFullError.
 */
export class OnnxTranscriptionEngine implements TranscriptionEngine {
    readonly multilingual: boolean;
    readonly languages: readonly string[];
    readonly wordTimestamps: boolean;
    private readonly admission: AdmissionQueue;

    private constructor(readonly id: string, private readonly pool: WorkerPool, private readonly spec: WhisperModelSpec,
        private readonly described: WhisperModelDescription, private readonly placement: Placement, options: OnnxTranscriptionEngineOptions,
        private readonly decoding: {temperatureFallback: boolean, conditionOnPreviousText: boolean}, private readonly maxAudioSeconds: number) {
        this.multilingual = described.multilingual;
        this.languages = described.languages;
        this.wordTimestamps = described.wordTimestamps;
        this.admission = new AdmissionQueue(options.parallel, options.queueSize, id);
    }

    /** Loads the model in every worker of its placement (a client's first request should not pay the load). */
    static async load(pool: WorkerPool, entry: ModelEntry<TranscriptionSettings>, options: OnnxTranscriptionEngineOptions): Promise<OnnxTranscriptionEngine> {
        const spec = whisperModelSpec(entry.id, entry.path, entry.settings, options.threads);
        const placement: Placement = {key: spec.key, workers: options.workers ?? pool.size};
        pool.acquire(placement);
        try {
            const [described] = await pool.runOnEach(transcriptionTaskHandles.describe, spec, placement);
            return new OnnxTranscriptionEngine(entry.id, pool, spec, described, placement, options, {
                temperatureFallback: entry.settings.temperatureFallback, conditionOnPreviousText: entry.settings.conditionOnPreviousText
            }, options.maxAudioSeconds);
        } catch (error) {
            await pool.release(transcriptionTaskHandles.release, spec, placement);
            throw error;
        }
    }

    load(): EngineLoad {
        return this.admission.load();
    }

    describe() {
        return {multilingual: this.multilingual, languages: this.languages.length, maxWindowTokens: this.described.maxWindowTokens, wordTimestamps: this.wordTimestamps};
    }

    transcribe(job: TranscriptionJob, options: TranscriptionOptions): Promise<TranscriptionResult> {
        return this.admission.run(1, options.signal, () => this.run(job, options));
    }

    private async run(job: TranscriptionJob, {signal, onSegments}: TranscriptionOptions): Promise<TranscriptionResult> {
        const file = job.file.slice();
        const decoded = await this.pool.run(transcriptionTaskHandles.decode, {file, maxSeconds: this.maxAudioSeconds}, {signal, transfer: [file.buffer], placement: this.placement});
        if ("error" in decoded)
            throw new AudioFileRefusedError(decoded.error, decoded.code);
        const onProgress = ({segments, processedSeconds, totalSeconds}: WindowProgress) => onSegments?.(segments, processedSeconds, totalSeconds);
        return this.pool.run(transcriptionTaskHandles.transcribe, {
            model: this.spec, samples: decoded.samples, task: job.task, language: job.language, prompt: job.prompt, temperature: job.temperature,
            ...this.decoding, logprobs: job.logprobs, wordTimestamps: job.wordTimestamps
        }, {signal, onProgress, transfer: [decoded.samples.buffer as ArrayBuffer], placement: this.placement});
    }

    /** Refuses new requests, lets the admitted ones finish, then frees the model in its workers (once no other entry uses it). */
    async dispose(): Promise<void> {
        this.admission.close(new EngineDisposedError(this.id));
        await this.admission.drain();
        if (!this.pool.closed)
            await this.pool.release(transcriptionTaskHandles.release, this.spec, this.placement);
    }
}
