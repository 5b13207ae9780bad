/** Which speech model a task is for; workers load each model once (by `key`) and keep it. */
export type SpeechModelSpec = {
    /** `<folder>:<dtype>:<threads>`: one loaded copy per distinct spec in each worker (entries sharing a folder share it). */
    key: string;
    /** Folder with config.json, tokenizer.json, tokenizer_config.json, onnx/*.onnx (and voices/*.bin for Kokoro). */
    folder: string;
    /** transformers.js dtype (selects the file suffix: fp32 = model.onnx, q8 = model_quantized.onnx, ...). */
    dtype: string;
    /** File name in onnx/ without `.onnx` when it is not `model<dtype suffix>` (e.g. "model_q8f16"); the dtype is then fp32. */
    modelFileName: string | null;
    /** ONNX Runtime intra-op threads of this model's session in each worker. */
    threads: number;
};

export type SpeechModelType = "kokoro" | "vits";

export type SpeechModelDescription = {
    modelType: SpeechModelType;
    sampleRate: number;
    voices: string[];
    /** The model's own preferred voice (Kokoro af_heart when present), before the manifest's choice. */
    defaultVoice: string;
    hasSpeedInput: boolean;
    /** Longest sentence (characters) given to one forward pass; `splitSentences` cuts longer ones. */
    maxSentenceChars: number;
};

export type SynthesizeTask = {
    model: SpeechModelSpec;
    sentences: string[];
    voice: string;
    speed: number;
    /**
     * Shared Int32Array of 1: sentences the main thread has handed to its consumer. The worker starts
     * sentence k only once k - `lookahead` of them were delivered, so after a cancellation at most
     * `lookahead` more sentences are synthesized (and a test can cancel deterministically).
     */
    delivered: Int32Array;
    lookahead: number;
    /** Optional shared Int32Array of 1 the worker increments as it starts each sentence's forward pass (observability for tests and benchmarks). */
    started?: Int32Array;
};

/**
 * One progress message per sentence, in order; `samples` is transferred. A sentence in which the tokenizer found
 * nothing to speak has no tokens and no samples.
 */
export type SentenceAudio = {index: number, samples: Float32Array, tokens: number};

export type SynthesizeResult = {inputTokens: number, outputSamples: number};

/** No sentence of the task gave the model a token to speak (only emoji, symbols, white space...): a 400 naming `input`, not a silent file. */
export type NothingToSpeak = {nothingToSpeak: true};

/** What a synthesize task answers. */
export type SynthesizeOutcome = SynthesizeResult | NothingToSpeak;
