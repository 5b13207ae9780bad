import type { Pooling } from "./pooling.js";

/** Which ONNX model a task is for; workers load each model once (by `key`) and keep it. */
export type OnnxModelSpec = {
    key: string;
    /** Folder with config.json, tokenizer.json and onnx/model*.onnx. */
    folder: string;
    /** transformers.js dtype: picks onnx/model.onnx (fp32), model_quantized.onnx (q8), model_fp16.onnx (fp16), ... */
    dtype: string;
    /** Base name of the ONNX file in onnx/ without `.onnx` and dtype suffix; null = "model". */
    modelFileName: string | null;
    /** ONNX Runtime intra-op threads of this model's session in each worker. */
    threads: number;
    pooling: Pooling;
};

export type DescribeTask = {kind: "describe", model: OnnxModelSpec};
export type DescribeResult = {
    /** The model's own input limit (tokenizer model_max_length / config max_position_embeddings), when it declares one. */
    maxPositions: number | null;
    dimensions: number;
    vocabularySize: number;
};

export type TokenizeTask = {kind: "tokenize", model: OnnxModelSpec, texts: string[]};
export type TokenizeResult = {ids: Int32Array[]};

/**
 * Runs the model on one batch. `cancel` is a shared flag (Int32Array over a SharedArrayBuffer):
 * when the request is cancelled the main thread sets it to 1 and the worker skips the batch.
 * A running `session.run()` is never interrupted (terminating a worker inside it kills the process).
 */
export type EmbedTask = {kind: "embed", model: OnnxModelSpec, ids: Int32Array[], cancel: Int32Array};
export type EmbedTaskResult = {cancelled: true} | {cancelled: false, vectors: Float32Array[]};

export type OnnxTask = DescribeTask | TokenizeTask | EmbedTask;
