import type { AudioFileRefusal, TranscriptionResult, TranscriptSegment } from "../TranscriptionEngine.js";

/** Which Whisper model a task is for; workers load each model once (by `key`) and keep it. */
export type WhisperModelSpec = {
    /** `<folder>:<dtype>:<threads>`: one loaded copy per distinct spec in each worker. */
    key: string;
    /** Folder with config.json, generation_config.json, preprocessor_config.json, tokenizer files, onnx/encoder_model*.onnx and onnx/decoder_model_merged*.onnx. */
    folder: string;
    /** transformers.js dtype of both sessions (fp32 = encoder_model.onnx, q8 = encoder_model_quantized.onnx, ...). */
    dtype: string;
    threads: number;
};

export type WhisperModelDescription = {
    /** Whether the model knows languages other than English and the translate task (not the `.en` models). */
    multilingual: boolean;
    /** ISO-639-1 codes of its language tokens (`<|en|>` ...). */
    languages: string[];
    /** Text tokens generated per 30 s window at most (half the decoder's context, as Whisper does). */
    maxWindowTokens: number;
    /**
     * Whether word timestamps can be computed: the decoder was exported with its cross-attentions
     * (`cross_attentions.*` outputs, as onnx-community's `*_timestamped` exports) and generation_config.json
     * names the `alignment_heads`.
     */
    wordTimestamps: boolean;
};

/**
 * One request's whole work in a worker: the uploaded file decoded (mono, 16 kHz, at most `maxSeconds` of it)
 * and transcribed, its windows' segments sent as progress.
 */
export type TranscribeTask = {
    model: WhisperModelSpec;
    /** The uploaded file's bytes, in any supported container, in pieces (moved to the worker, not copied: see ownedPieces). */
    file: Uint8Array[];
    /** The longest audio accepted (`--max-audio-seconds`). */
    maxSeconds: number;
    task: "transcribe" | "translate";
    /** ISO-639-1 code; null = detected from the first 30 s (multilingual models; English-only ones: English). */
    language: string | null;
    /** Text the model continues from (`<|startofprev|>`), as OpenAI's `prompt`. */
    prompt: string | null;
    /** 0 = greedy, falling back to sampling at 0.2 ... 1 where a window fails Whisper's checks; else sampling at this temperature. */
    temperature: number;
    /** Whether temperature 0 falls back to sampling (manifest `temperatureFallback`); false = one greedy decode per window. */
    temperatureFallback: boolean;
    /** Whether each window is prompted with the text of the windows before it (manifest `conditionOnPreviousText`). */
    conditionOnPreviousText: boolean;
    /** Each segment's text tokens with their log-probabilities (`include[]=logprobs`). */
    logprobs: boolean;
    /** Each segment's words with their times, from the cross-attentions (`timestamp_granularities[]=word`). */
    wordTimestamps: boolean;
};

/** Sent after each window: its segments (final: later windows never change them) and how far the task is. */
export type WindowProgress = {segments: TranscriptSegment[], processedSeconds: number, totalSeconds: number};

/** A file the server will not transcribe, and why: a 400 naming `file`, not a server error. */
export type DecodeFailure = {error: string, code: AudioFileRefusal};

/** The transcript, or why the file was refused. */
export type TranscribeOutcome = TranscriptionResult | DecodeFailure;
