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

/** An uploaded file to decode, and the longest audio accepted (`--max-audio-seconds`). */
export type DecodeTask = {file: Uint8Array, maxSeconds: number};
/** Decoded audio: mono float32 at 16 kHz, as Whisper takes it. */
export type DecodedAudio = {samples: Float32Array, seconds: number};
/** A file the server will not transcribe, and why: a 400 naming `file`, not a server error. */
export type DecodeFailure = {error: string, code: AudioFileRefusal};
/** Why: the decoders cannot read it; it is longer than the limit; its sample rate is outside 8-384 kHz. */
export type AudioFileRefusal = "invalid_file_format" | "audio_too_long" | "unsupported_sample_rate";

export type TranscribeTask = {
    model: WhisperModelSpec;
    samples: Float32Array;
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

/** A word and when it is said, in seconds from the start of the file. */
export type WhisperWord = {word: string, start: number, end: number};
/** A text token of the transcript: its text, its bytes (a token may hold part of a character) and its log-probability. */
export type TokenLogprob = {token: string, bytes: number[], logprob: number};

/** One segment of the transcript, times in seconds from the start of the file. */
export type WhisperSegment = {
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
    /** When asked for (TranscribeTask.wordTimestamps). */
    words?: WhisperWord[];
    /** When asked for (TranscribeTask.logprobs). */
    logprobs?: TokenLogprob[];
};

/** Sent after each window: its segments (final: later windows never change them) and how far the task is. */
export type WindowProgress = {segments: WhisperSegment[], processedSeconds: number, totalSeconds: number};

/** `language`: the one given, or the one detected (ISO-639-1). */
export type TranscribeResult = {segments: WhisperSegment[], text: string, seconds: number, outputTokens: number, language: string};
