import type { EncoderFiles } from "../../../runtimes/onnx/loadEncoder.js";
import type { Pooling } from "./pooling.js";

/** Which ONNX model a task is for; workers load each model once (by `key`) and keep it. */
export type OnnxModelSpec = EncoderFiles & {
    key: string;
    pooling: Pooling;
};

export type DescribeResult = {
    /** The model's own input limit (tokenizer model_max_length / config max_position_embeddings), when it declares one. */
    maxPositions: number | null;
    dimensions: number;
    vocabularySize: number;
};

export type TokenizeTask = {model: OnnxModelSpec, texts: string[]};
export type TokenizeResult = {ids: Int32Array[]};

/**
 * Runs the model on one batch. A batch whose request was cancelled before it started is skipped
 * (`cancelled: true`); a running `session.run()` is never interrupted (terminating a worker inside
 * it kills the process).
 */
export type EmbedTask = {model: OnnxModelSpec, ids: Int32Array[]};
export type EmbedTaskResult = {cancelled: true} | {cancelled: false, vectors: Float32Array[]};
