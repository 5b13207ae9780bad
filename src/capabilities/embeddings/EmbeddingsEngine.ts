import type { Engine } from "../../core/engines/Engine.js";

/**
 * What the HTTP layer needs from an embeddings backend (ONNX models in the worker pool, GGUF models
 * on node-llama-cpp). Like ChatEngine, these are engine types, not OpenAI wire types:
 * `api/embeddings/toEmbeddingsJob.ts` converts.
 */
export type EmbeddingsEngineInfo = {
    id: string;
    /** Longest input in tokens (special tokens included); longer inputs are refused, never truncated. */
    maxInputTokens: number;
    /** Length of a full vector. */
    dimensions: number;
    /** Token ids must be below this. */
    vocabularySize: number;
    /** Whether shorter vectors (`dimensions`) may be requested: false, true (any 1..dimensions) or the allowed sizes. */
    matryoshka: boolean | number[];
    /** Whether the vectors are L2-normalised (then also after truncation to `dimensions`). */
    normalize: boolean;
};

/** One input: text (tokenized by the engine) or token ids used exactly as given. */
export type EmbeddingInput = string | number[];

export type EmbedOptions = {
    /** Truncate each vector to this many dimensions (Matryoshka models only; checked by the caller). */
    dimensions?: number | null;
    signal: AbortSignal;
};

export type EmbedResult = {
    /** One vector per input, in input order. */
    vectors: Float32Array[];
    /** Tokens of all inputs, as the model saw them. */
    promptTokens: number;
};

export interface EmbeddingsEngine extends Engine {
    readonly info: EmbeddingsEngineInfo;
    /**
     * Embeds every input. Throws `InputTooLongError` (naming the input's index) when a text has more
     * than `maxInputTokens` tokens, `QueueFullError` when too many requests wait, `EngineDisposedError`
     * after `dispose()`; rejects with the signal's reason when it aborts.
     */
    embed(inputs: EmbeddingInput[], options: EmbedOptions): Promise<EmbedResult>;
    /** Stops accepting requests and waits for the ones in flight before releasing the model. */
    dispose(): Promise<void>;
}
