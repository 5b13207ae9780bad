import { NothingToSpeakError } from "../errors/NothingToSpeakError.js";
import { UnknownVoiceError } from "../errors/UnknownVoiceError.js";
import type { EngineLoad } from "../../../core/engines/EngineLoad.js";
import type { ModelEntry } from "../../../core/registry/ModelEntry.js";
import type { WorkerPool } from "../../../core/workers/WorkerPool.js";
import { PlacedModel } from "../../../runtimes/onnx/PlacedModel.js";
import type { SpeechEngine, SpeechJob, SpeechResult, SynthesizeOptions } from "../SpeechEngine.js";
import type { SpeechSettings } from "../speechManifest.js";
import { splitSentences } from "../splitSentences.js";
import { resolveVoices } from "./resolveVoices.js";
import { speechModelSpec } from "./speechModelSpec.js";
import type { SentenceAudio, SpeechModelDescription, SpeechModelSpec, SynthesizeTask } from "./speechWorkerProtocol.js";
import { speechTaskHandles } from "./speechTaskHandles.js";

export type OnnxSpeechEngineOptions = {
    threads: number, parallel: number, queueSize: number, onWarning?(message: string): void,
    /** How many of the pool's workers load the model (manifest `workers`); default all. */
    workers?: number
};

/**
 * Sentences a worker may synthesize beyond the one the main thread is handing out: enough to keep
 * the worker busy while the main thread encodes, few enough that a cancelled request wastes at most
 * one sentence of work.
 */
const lookahead = 1;

/**
 * A Kokoro or VITS model run in the shared worker pool (task module `speechTasks.ts`). A request is
 * split into sentences here and synthesized in order by one task, which sends each sentence's audio
 * as soon as it is ready; `parallel` requests run at once (each on its own worker), `queueSize` more
 * wait, beyond that QueueFullError.
 */
export class OnnxSpeechEngine implements SpeechEngine {
    readonly id: string;
    readonly sampleRate: number;
    readonly voices: readonly string[];
    readonly hasSpeedInput: boolean;
    private readonly described: SpeechModelDescription;

    private constructor(private readonly model: PlacedModel<SpeechModelSpec, SpeechModelDescription>, readonly defaultVoice: string,
        readonly voiceAliases: Readonly<Record<string, string>>) {
        ({id: this.id, described: this.described} = model);
        ({sampleRate: this.sampleRate, voices: this.voices, hasSpeedInput: this.hasSpeedInput} = model.described);
    }

    /**
     * Loads the model in every worker of its placement (all, or the manifest's `workers`: a client's
     * first request should not pay the model and phonemizer load), lists its voices and checks the
     * manifest's voice fields.
     */
    static load(pool: WorkerPool, entry: ModelEntry<SpeechSettings>, options: OnnxSpeechEngineOptions): Promise<OnnxSpeechEngine> {
        const spec = speechModelSpec(entry.id, entry.path, entry.settings, options.threads);
        return PlacedModel.place(pool, {...options, id: entry.id, spec, tasks: speechTaskHandles, preload: "each"}, (model) => {
            const {voiceAliases, defaultVoice} = resolveVoices(entry.id, model.described, entry.settings);
            return new OnnxSpeechEngine(model, defaultVoice, voiceAliases);
        });
    }

    load(): EngineLoad {
        return this.model.load();
    }

    describe() {
        return {
            modelType: this.described.modelType, sampleRate: this.sampleRate, voices: this.voices.length,
            defaultVoice: this.defaultVoice, speedInput: this.hasSpeedInput
        };
    }

    /** Throws QueueFullError synchronously when the queue is full (so the handler answers 503 before sending anything). */
    synthesize(job: SpeechJob, options: SynthesizeOptions): Promise<SpeechResult> {
        if (!this.voices.includes(job.voice))
            return Promise.reject(new UnknownVoiceError(job.voice, this.id, [...this.voices, ...Object.keys(this.voiceAliases)]));
        return this.model.admit(options.signal, () => this.run(job, options));
    }

    private async run(job: SpeechJob, {signal, onAudio}: SynthesizeOptions): Promise<SpeechResult> {
        const sentences = splitSentences(job.input, this.described.maxSentenceChars);
        if (sentences.length === 0)
            throw new NothingToSpeakError(this.id);
        const delivered = new Int32Array(new SharedArrayBuffer(4));
        // A consumer that throws stops the task like a cancellation, and the call rejects with its error.
        const consumerFailed = new AbortController();
        const taskSignal = AbortSignal.any([signal, consumerFailed.signal]);
        const task: SynthesizeTask = {
            model: this.model.spec, sentences, voice: job.voice, speed: this.hasSpeedInput ? job.speed : 1, delivered, lookahead
        };
        let next = 0;
        const onProgress = ({index, samples}: SentenceAudio) => {
            try {
                if (index !== next)
                    throw new Error(`Speech task sent sentence ${index}, expected ${next}`);
                next++;
                // A sentence with nothing to speak hands nothing over: the first audio (a stream's headers) waits for one that has.
                if (samples.length > 0)
                    onAudio(samples);
            } catch (error) {
                consumerFailed.abort(error);
            }
            Atomics.add(delivered, 0, 1);
            Atomics.notify(delivered, 0);
        };
        const result = this.model.run(speechTaskHandles.synthesize, task, {signal: taskSignal, onProgress});
        // Registered after run(), so the pool's own listener has set the task's cancel flag when the
        // worker wakes. The count is changed too, not only notified: a worker that checked the flag
        // just before the abort and is about to wait for the old count then does not wait at all.
        const wake = () => {
            Atomics.store(delivered, 0, 1 << 30);
            Atomics.notify(delivered, 0);
        };
        taskSignal.addEventListener("abort", wake, {once: true});
        try {
            const outcome = await result;
            if ("nothingToSpeak" in outcome)
                throw new NothingToSpeakError(this.id);
            return {inputTokens: outcome.inputTokens, outputSamples: outcome.outputSamples};
        } finally {
            taskSignal.removeEventListener("abort", wake);
        }
    }

    /** Refuses new requests, lets the admitted ones finish, then frees the model in its workers (once no other entry uses it). */
    dispose(): Promise<void> {
        return this.model.dispose();
    }
}
