import type { SpeechEngine, SpeechJob, SpeechResult, SynthesizeOptions } from "../../src/capabilities/speech/SpeechEngine.js";
import { AdmissionQueue } from "../../src/core/admission/AdmissionQueue.js";
import type { EngineLoad } from "../../src/core/engines/EngineLoad.js";

export type FakeSpeechOptions = {
    sampleRate: number;
    hasSpeedInput: boolean;
    voices?: string[];
    defaultVoice?: string;
    voiceAliases?: Record<string, string>;
    parallel?: number;
    queueSize?: number;
    /** Awaited before each sentence of every job (a gate of the spawned test server); default none. */
    beforeSentence?: (index: number, signal: AbortSignal) => Promise<void>;
};

/** A hold the test placed before a sentence: `reached` resolves when the engine waits there; `release()` lets it go on. */
export type SentenceGate = {reached: Promise<void>, release(): void};

/** The sentences of a text as the fake splits them: after `.`, `!` or `?` and white space. */
export function fakeSentences(input: string): string[] {
    return input.trim().split(/(?<=[.!?])\s+/).filter((sentence) => sentence !== "");
}

/**
 * Deterministic audio of one sentence: a 0.5-amplitude sine whose frequency depends on the sentence's
 * index and the voice, `0.1 s + 10 ms per character` long (divided by `speed`).
 */
export function fakeSentenceAudio(sentence: string, index: number, voice: string, speed: number, sampleRate: number): Float32Array {
    const frequency = 300 + 100 * (index % 5) + 10 * (voice.length % 7);
    const length = Math.round(sampleRate * (0.1 + 0.01 * sentence.length) / speed);
    return Float32Array.from({length}, (_, i) => 0.5 * Math.sin(2 * Math.PI * frequency * i / sampleRate));
}

/**
 * A speech engine without a model, for testing the HTTP layer: per sentence a known sine (see
 * fakeSentenceAudio), handed over as the real engine does; admission through the real
 * AdmissionQueue (so /health and the 503 are real); and gates the test places before a sentence, so
 * "the first bytes left before sentence 2 existed" and "a disconnect at sentence 2 stops it" are
 * proven by events, not timing.
 */
export class FakeSpeechEngine implements SpeechEngine {
    readonly sampleRate: number;
    readonly voices: readonly string[];
    readonly defaultVoice: string;
    readonly voiceAliases: Readonly<Record<string, string>>;
    readonly hasSpeedInput: boolean;
    /** Every job, as received. */
    readonly jobs: SpeechJob[] = [];
    /** Per job, the samples of each sentence handed over. */
    readonly produced: Float32Array[][] = [];
    /** Abort reasons the engine saw. */
    readonly aborts: unknown[] = [];
    private readonly queue: AdmissionQueue;
    private readonly gates = new Map<number, {reached: () => void, released: Promise<void>}>();
    private readonly failures = new Map<number, Error>();

    constructor(readonly id: string, private readonly options: FakeSpeechOptions) {
        this.sampleRate = options.sampleRate;
        this.hasSpeedInput = options.hasSpeedInput;
        this.voices = options.voices ?? ["af_heart", "am_onyx"];
        this.defaultVoice = options.defaultVoice ?? this.voices[0];
        this.voiceAliases = options.voiceAliases ?? {alloy: this.voices[0], onyx: this.voices[1] ?? this.voices[0]};
        this.queue = new AdmissionQueue(options.parallel ?? 1, options.queueSize ?? 4, id);
    }

    /** The next job waits before synthesizing sentence `index` (0-based) until the test releases it. */
    holdBefore(index: number): SentenceGate {
        let reached!: () => void;
        let release!: () => void;
        const reachedPromise = new Promise<void>((resolve) => reached = resolve);
        const released = new Promise<void>((resolve) => release = resolve);
        this.gates.set(index, {reached, released});
        return {reached: reachedPromise, release};
    }

    /** The next job fails with `error` instead of synthesizing sentence `index`. */
    failBefore(index: number, error: Error) {
        this.failures.set(index, error);
    }

    load(): EngineLoad {
        return this.queue.load();
    }

    synthesize(job: SpeechJob, {signal, onAudio}: SynthesizeOptions): Promise<SpeechResult> {
        this.jobs.push(job);
        const sentences: Float32Array[] = [];
        this.produced.push(sentences);
        return this.queue.run(1, signal, async () => {
            let outputSamples = 0;
            const parts = fakeSentences(job.input);
            for (const [index, sentence] of parts.entries()) {
                await this.options.beforeSentence?.(index, signal);
                const gate = this.gates.get(index);
                if (gate != null) {
                    this.gates.delete(index);
                    gate.reached();
                    await Promise.race([gate.released, aborted(signal)]);
                }
                const failure = this.failures.get(index);
                if (failure != null) {
                    this.failures.delete(index);
                    throw failure;
                }
                if (signal.aborted) {
                    this.aborts.push(signal.reason);
                    throw signal.reason;
                }
                const samples = fakeSentenceAudio(sentence, index, job.voice, this.hasSpeedInput ? job.speed : 1, this.sampleRate);
                sentences.push(samples);
                outputSamples += samples.length;
                onAudio(samples);
                // The real engine yields to the event loop between sentences (a worker round trip).
                await new Promise((resolve) => setImmediate(resolve));
            }
            return {inputTokens: job.input.length, outputSamples};
        });
    }

    async dispose() {
        this.queue.close(new Error("disposed"));
        await this.queue.drain();
    }
}

function aborted(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
        if (signal.aborted)
            resolve();
        else
            signal.addEventListener("abort", () => resolve(), {once: true});
    });
}
