import type { Engine } from "../../core/engines/Engine.js";

/** One speech request as the engine sees it (the API layer has resolved aliases and checked bounds). */
export type SpeechJob = {
    /** The text, 1..4096 characters; the engine splits it at sentence boundaries. */
    input: string;
    /** One of the engine's own `voices`. */
    voice: string;
    /** 0.25..4. Engines without a speed input (`hasSpeedInput` false) synthesize at 1; the API layer time-stretches. */
    speed: number;
};

export type SpeechResult = {
    /** Tokens fed to the model (phoneme ids for Kokoro, characters for VITS), over all sentences. */
    inputTokens: number;
    /** Samples produced at `sampleRate`, over all sentences. */
    outputSamples: number;
};

export type SynthesizeOptions = {
    /** Aborted when the client goes away or the server stops: synthesis stops at the next sentence and the call rejects with the signal's reason. */
    signal: AbortSignal;
    /**
     * Each sentence's audio (mono float32 in -1..1 at `sampleRate`), in order, as soon as it is synthesized; never empty
     * (a sentence with nothing to speak in it, such as a lone emoji, is skipped).
     */
    onAudio(samples: Float32Array): void;
};

/** A loaded text-to-speech model. */
export interface SpeechEngine extends Engine {
    readonly id: string;
    /** The model's own output rate (Kokoro 24000, VITS/MMS 16000). */
    readonly sampleRate: number;
    /** The model's own voice names (a one-speaker model has one, e.g. "default"). */
    readonly voices: readonly string[];
    readonly defaultVoice: string;
    /** Other names a voice answers to (OpenAI's `alloy`, `nova`...): name -> one of `voices`. */
    readonly voiceAliases: Readonly<Record<string, string>>;
    /** Whether the model takes a speed input (Kokoro does; VITS does not). */
    readonly hasSpeedInput: boolean;
    /** Rejects with NothingToSpeakError, before any `onAudio`, when no sentence of the input has anything to speak. */
    synthesize(job: SpeechJob, options: SynthesizeOptions): Promise<SpeechResult>;
}
