/**
 * Groups inputs into batches for an encoder: sorted by length (so little padding is computed), at
 * most `maxBatchSize` inputs and at most `maxBatchTokens` padded tokens per batch (one long input
 * may exceed it alone). Returns input indices per batch. Used by the embeddings and rerank engines.
 */
export function planBatches(lengths: readonly number[], maxBatchSize: number, maxBatchTokens: number): number[][] {
    const order = lengths.map((_, index) => index).sort((a, b) => lengths[a] - lengths[b] || a - b);
    const batches: number[][] = [];
    let current: number[] = [];
    for (const index of order) {
        // Sorted ascending: this input is the longest of the batch, so it sets the padded length.
        const paddedTokens = (current.length + 1) * lengths[index];
        if (current.length > 0 && (current.length >= maxBatchSize || paddedTokens > maxBatchTokens)) {
            batches.push(current);
            current = [];
        }
        current.push(index);
    }
    if (current.length > 0)
        batches.push(current);
    return batches;
}

/**
 * Runs one task per batch, all at once (the pool gives them fair turns): one failure stops the batches that have
 * not started (their signal aborts); all are awaited, so this returns or throws only once none of them is running.
 * Rejects with the request's abort reason when `signal` aborted, else with the first failure.
 */
export async function runBatches(batches: readonly number[][], signal: AbortSignal,
    runBatch: (batch: number[], batchSignal: AbortSignal) => Promise<void>): Promise<void> {
    const failed = new AbortController();
    const batchSignal = AbortSignal.any([signal, failed.signal]);
    const settled = await Promise.allSettled(batches.map(async (batch) => {
        try {
            await runBatch(batch, batchSignal);
        } catch (error) {
            failed.abort(error);
            throw error;
        }
    }));
    signal.throwIfAborted();
    const failure = settled.find((result) => result.status === "rejected");
    if (failure != null)
        throw failure.reason;
}
