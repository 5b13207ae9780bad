import type { EncoderFiles } from "../../../runtimes/onnx/loadEncoder.js";

/** Which cross-encoder a task is for; workers load each model once (by `key`) and keep it. */
export type CrossEncoderSpec = EncoderFiles & {key: string};

export type CrossEncoderDescription = {
    /** The model's own input limit, when it declares one. */
    maxPositions: number | null;
    /** Labels of the classification head: 1 = a relevance logit (sigmoid), 2 = [irrelevant, relevant] (softmax). */
    labels: number;
};

/** Tokenizes the pairs (query, document) as the model's tokenizer pairs them: ids and token types (segment) per pair. */
export type PairTokenizeTask = {model: CrossEncoderSpec, query: string, documents: string[]};
export type PairTokenizeResult = {ids: Int32Array[], typeIds: Int32Array[]};

/**
 * Scores one batch of tokenized pairs. A batch whose request was cancelled before it started is skipped
 * (`cancelled: true`); a running `session.run()` is never interrupted.
 */
export type ScoreTask = {model: CrossEncoderSpec, ids: Int32Array[], typeIds: Int32Array[]};
export type ScoreTaskResult = {cancelled: true} | {cancelled: false, scores: Float32Array};
