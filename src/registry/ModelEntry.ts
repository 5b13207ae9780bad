import type { Pooling } from "../capabilities/embeddings/onnx/pooling.js";

export const modelTasks = ["chat", "embeddings", "speech", "image"] as const;
export type ModelTask = typeof modelTasks[number];

/** The HTTP endpoints a model of each task answers; `/v1/models` lists them per model. */
export const endpointsByTask: Record<ModelTask, string[]> = {
    chat: ["/v1/chat/completions"],
    embeddings: ["/v1/embeddings"],
    speech: ["/v1/audio/speech"],
    image: ["/v1/images/generations"]
};

/** One manifest entry after validation, with its path made absolute. */
export type ModelEntry = {
    id: string;
    task: ModelTask;
    /** Absolute path of the model file or folder. */
    path: string;
    family: string | null;
    /** ISO date (YYYY-MM-DD) the variant was released; orders `<family>-latest`. */
    released: string | null;
    aliases: string[];
    ownedBy: string;
    /** Tokens per sequence for chat models; null = the model's training context. */
    contextSize: number | null;
    /** CPU threads for this model; null = the server's `threads` setting. */
    threads: number | null;
    /** Concurrent sequences for this chat model; null = the server's `parallel` setting. */
    parallel: number | null;
    /** Settings of an embeddings model (only on `task: "embeddings"` entries). */
    embedding?: EmbeddingSettings;
};

/** Manifest fields of an embeddings model, with defaults applied. */
export type EmbeddingSettings = {
    /** Longest accepted input in tokens; null = the model's own limit. */
    maxInputTokens: number | null;
    /** How token vectors become one vector (ONNX models; GGUF models pool as the file says). */
    pooling: Pooling;
    /** L2-normalise the vectors (default true). */
    normalize: boolean;
    /** Whether `dimensions` may shorten the vectors: false, true (any size) or the allowed sizes. */
    matryoshka: boolean | number[];
    /** transformers.js dtype of the ONNX file (`fp32` = onnx/model.onnx, `q8` = onnx/model_quantized.onnx, ...); null = whichever file is there. */
    dtype: string | null;
    /** An ONNX file in the folder's `onnx/` to use instead (e.g. `model_O4.onnx`). */
    onnxFile: string | null;
};
