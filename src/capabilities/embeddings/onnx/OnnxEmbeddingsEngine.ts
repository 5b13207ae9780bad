import type { EngineLoad } from "../../../core/engines/EngineLoad.js";
import type { EmbeddingInput, EmbeddingsEngine, EmbeddingsEngineInfo, EmbedOptions, EmbedResult } from "../EmbeddingsEngine.js";
import { EngineDisposedError, InputTooLongError, QueueFullError } from "../../../core/engines/EngineErrors.js";
import type { OnnxWorkerPool } from "./OnnxWorkerPool.js";
import { finishVector, planBatches } from "./pooling.js";
import type { OnnxModelSpec } from "./workerProtocol.js";

export type OnnxEmbeddingsOptions = {
    spec: OnnxModelSpec;
    /** The manifest's `maxInputTokens`; null = the model's own limit. */
    maxInputTokens: number | null;
    matryoshka: boolean | number[];
    normalize: boolean;
    /** Requests that may wait beyond the ones the pool is running; more: QueueFullError. */
    queueSize: number;
    /** Inputs per forward pass. */
    maxBatchSize?: number;
    /** Padded tokens per forward pass (bounds a batch's memory). */
    maxBatchTokens?: number;
    onWarning?: (message: string) => void;
};

/** Texts per tokenize task: tokenizing is cheap, but a 2048-item request should not hold one worker for long. */
const tokenizeChunk = 256;
/** Used when the model declares no limit of its own. */
const fallbackMaxInputTokens = 512;

/**
 * A transformers.js embedding model run in the shared worker pool. One request becomes a few
 * tokenize tasks and then one task per batch; the batches of a request run in parallel on the pool.
 */
export class OnnxEmbeddingsEngine implements EmbeddingsEngine {
    private readonly active = new Set<Promise<unknown>>();
    private disposed: Promise<void> | null = null;

    private constructor(readonly info: EmbeddingsEngineInfo, private readonly pool: OnnxWorkerPool, private readonly options: OnnxEmbeddingsOptions) {}

    /** Loads the model (in one worker; the others load it on first use) and reads its shape. */
    static async load(pool: OnnxWorkerPool, id: string, options: OnnxEmbeddingsOptions): Promise<OnnxEmbeddingsEngine> {
        pool.retain();
        try {
            const described = await pool.describe({kind: "describe", model: options.spec});
            const ownLimit = described.maxPositions ?? fallbackMaxInputTokens;
            let maxInputTokens = options.maxInputTokens ?? ownLimit;
            if (described.maxPositions != null && maxInputTokens > described.maxPositions) {
                options.onWarning?.(`Model '${id}': maxInputTokens ${maxInputTokens} is more than the model's own limit of ${described.maxPositions} tokens; using ${described.maxPositions}.`);
                maxInputTokens = described.maxPositions;
            }
            const info: EmbeddingsEngineInfo = {
                id, maxInputTokens, dimensions: described.dimensions, vocabularySize: described.vocabularySize,
                matryoshka: options.matryoshka, normalize: options.normalize
            };
            return new OnnxEmbeddingsEngine(info, pool, options);
        } catch (error) {
            await pool.release();
            throw error;
        }
    }

    load(): EngineLoad {
        const running = Math.min(this.active.size, this.pool.size);
        return {parallel: this.pool.size, busy: running, waiting: this.active.size - running};
    }

    embed(inputs: EmbeddingInput[], options: EmbedOptions): Promise<EmbedResult> {
        if (this.disposed != null)
            return Promise.reject(new EngineDisposedError(this.info.id));
        if (this.active.size >= this.pool.size + this.options.queueSize)
            return Promise.reject(new QueueFullError(this.info.id, this.options.queueSize));
        const run = this.run(inputs, options);
        this.active.add(run);
        const forget = () => this.active.delete(run);
        run.then(forget, forget);
        return run;
    }

    private async run(inputs: EmbeddingInput[], options: EmbedOptions): Promise<EmbedResult> {
        const {signal} = options;
        signal.throwIfAborted();
        const cancel = new Int32Array(new SharedArrayBuffer(4));
        const onAbort = () => Atomics.store(cancel, 0, 1);
        signal.addEventListener("abort", onAbort, {once: true});
        try {
            const ids = await this.tokenize(inputs);
            signal.throwIfAborted();
            const lengths = ids.map((sequence) => sequence.length);
            const tooLong = lengths.findIndex((length) => length > this.info.maxInputTokens);
            if (tooLong >= 0)
                throw new InputTooLongError(tooLong, lengths[tooLong], this.info.maxInputTokens);

            const vectors: Float32Array[] = new Array(inputs.length);
            const batches = planBatches(lengths, this.options.maxBatchSize ?? 32, this.options.maxBatchTokens ?? 16_384);
            const results = batches.map(async (batch) => {
                const result = await this.pool.embed({kind: "embed", model: this.options.spec, ids: batch.map((index) => ids[index]), cancel});
                if (result.cancelled)
                    return;
                batch.forEach((index, position) => vectors[index] = finishVector(result.vectors[position], {dimensions: options.dimensions, normalize: this.info.normalize}));
            });
            // On the first failure the remaining batches are skipped, but all are awaited: the
            // request ends only once none of its tasks is running.
            const settled = await Promise.allSettled(results.map((result) => result.catch((error) => {
                Atomics.store(cancel, 0, 1);
                throw error;
            })));
            const failure = settled.find((result) => result.status === "rejected");
            if (failure != null)
                throw failure.reason;
            signal.throwIfAborted();
            return {vectors, promptTokens: lengths.reduce((sum, length) => sum + length, 0)};
        } finally {
            signal.removeEventListener("abort", onAbort);
        }
    }

    /** Texts are tokenized in the pool; token-id inputs are used as they are. */
    private async tokenize(inputs: EmbeddingInput[]): Promise<Int32Array[]> {
        const ids: Int32Array[] = new Array(inputs.length);
        const textIndices: number[] = [];
        inputs.forEach((input, index) => {
            if (typeof input === "string")
                textIndices.push(index);
            else
                ids[index] = Int32Array.from(input);
        });
        const chunks: number[][] = [];
        for (let start = 0; start < textIndices.length; start += tokenizeChunk)
            chunks.push(textIndices.slice(start, start + tokenizeChunk));
        await Promise.all(chunks.map(async (chunk) => {
            const result = await this.pool.tokenize({kind: "tokenize", model: this.options.spec, texts: chunk.map((index) => inputs[index] as string)});
            chunk.forEach((index, position) => ids[index] = result.ids[position]);
        }));
        return ids;
    }

    dispose(): Promise<void> {
        return this.disposed ??= (async () => {
            await Promise.allSettled([...this.active]);
            await this.pool.release();
        })();
    }
}
