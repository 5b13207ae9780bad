import type { Engine } from "../../core/engines/Engine.js";

/** A word and when it is said, in seconds from the start of the file. */
export type TranscriptWord = {word: string, start: number, end: number};
/** A text token of the transcript: its text, its bytes (a token may hold part of a character) and its log-probability. */
export type TokenLogprob = {token: string, bytes: number[], logprob: number};

/** One segment of the transcript, times in seconds from the start of the file. */
export type TranscriptSegment = {
    id: number;
    /** Where the window it came from starts, in 10 ms frames (OpenAI's `seek`). */
    seek: number;
    start: number;
    end: number;
    text: string;
    tokens: number[];
    avgLogprob: number;
    compressionRatio: number;
    noSpeechProb: number;
    /** The temperature its window was decoded at (above 0 after a fallback). */
    temperature: number;
    /** When asked for (TranscriptionJob.wordTimestamps). */
    words?: TranscriptWord[];
    /** When asked for (TranscriptionJob.logprobs). */
    logprobs?: TokenLogprob[];
};

/** One request as the engine sees it (the API layer has checked every field). */
export type TranscriptionJob = {
    /** The uploaded file's bytes, in any supported container, in the pieces they arrived in (joined and decoded in a worker). */
    file: Uint8Array[];
    task: "transcribe" | "translate";
    language: string | null;
    prompt: string | null;
    temperature: number;
    /** Each segment's text tokens with their log-probabilities. */
    logprobs: boolean;
    /** Each segment's words with their times (only where `wordTimestamps` is true). */
    wordTimestamps: boolean;
};

export type TranscriptionOptions = {
    /** Aborted when the client goes away: the work stops at the next decoder step and the call rejects with the signal's reason. */
    signal: AbortSignal;
    /** Each window's finished segments, in order, as soon as the window is decoded. */
    onSegments?(segments: TranscriptSegment[], processedSeconds: number, totalSeconds: number): void;
};

/** `language`: the one asked for, or the one Whisper detected (ISO-639-1). */
export type TranscriptionResult = {segments: TranscriptSegment[], text: string, seconds: number, outputTokens: number, language: string};

/** Why a file is refused: the decoders cannot read it; it is longer than the limit; its sample rate is outside 8-384 kHz. */
export type AudioFileRefusal = "invalid_file_format" | "audio_too_long" | "unsupported_sample_rate";

/**
 * A file the server will not transcribe: the decoders cannot read it, it is longer than `--max-audio-seconds`,
 * or its sample rate is outside 8-384 kHz. The API answers 400 naming `file`, with `code`.
 */
export class AudioFileRefusedError extends Error {
    constructor(message: string, readonly code: AudioFileRefusal) {
        super(message);
    }
}

/** A loaded speech-to-text model. */
export interface TranscriptionEngine extends Engine {
    readonly id: string;
    /** Whether the model knows languages besides English and can translate. */
    readonly multilingual: boolean;
    /** ISO-639-1 codes it accepts as `language`. */
    readonly languages: readonly string[];
    /** Whether it can time words (a decoder exported with its cross-attentions, and alignment heads). */
    readonly wordTimestamps: boolean;
    /**
     * Decodes the file (AudioFileRefusedError when it cannot or may not) and transcribes or translates it. Throws
     * QueueFullError when the queue is full, before any work.
     */
    transcribe(job: TranscriptionJob, options: TranscriptionOptions): Promise<TranscriptionResult>;
}
