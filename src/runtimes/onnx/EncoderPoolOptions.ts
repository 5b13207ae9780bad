/** How an encoder model (embeddings, a cross-encoder) runs its requests on the shared worker pool. */
export type EncoderPoolOptions = {
    /** Requests served at once (their batches share the pool fairly). */
    parallel: number;
    /** Requests that may wait beyond those; more: QueueFullError. */
    queueSize: number;
    /** Inputs per forward pass. */
    maxBatchSize?: number;
    /** Padded tokens per forward pass (bounds a batch's memory). */
    maxBatchTokens?: number;
    onWarning?: (message: string) => void;
    /** How many of the pool's workers load the model (manifest `workers`); default all. */
    workers?: number;
};
