import type { Engine } from "../../core/engines/Engine.js";

/** What the HTTP layer needs from a reranker (a cross-encoder: GGUF on node-llama-cpp, ONNX in the worker pool). Engine types, not wire types. */
export type RerankEngineInfo = {
    id: string;
    /** Longest (query, document) pair in tokens, special tokens included; longer pairs are refused, never truncated. */
    maxInputTokens: number;
};

export type RankOptions = {signal: AbortSignal};

export type RankResult = {
    /** Each document's relevance to the query, 0 to 1, in document order. */
    scores: number[];
    /** Tokens of all pairs, as the model saw them. */
    promptTokens: number;
};

export interface RerankEngine extends Engine {
    readonly info: RerankEngineInfo;
    /**
     * Scores every document against the query. Throws `PairTooLongError` when a pair has more than `maxInputTokens`
     * tokens, `QueueFullError` when too many requests wait, `EngineDisposedError` after `dispose()`; rejects with
     * the signal's reason when it aborts (the documents not yet scored are not).
     */
    rank(query: string, documents: string[], options: RankOptions): Promise<RankResult>;
    /** Stops accepting requests and waits for the ones in flight before releasing the model. */
    dispose(): Promise<void>;
}
