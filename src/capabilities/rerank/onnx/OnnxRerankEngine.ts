import type { EncoderPoolOptions } from "../../../runtimes/onnx/EncoderPoolOptions.js";
import type { EngineLoad } from "../../../core/engines/EngineLoad.js";
import type { WorkerPool } from "../../../core/workers/WorkerPool.js";
import { PlacedModel } from "../../../runtimes/onnx/PlacedModel.js";
import { planBatches, runBatches } from "../../../runtimes/onnx/planBatches.js";
import { PairTooLongError } from "../PairTooLongError.js";
import type { RankOptions, RankResult, RerankEngine, RerankEngineInfo } from "../RerankEngine.js";
import { rerankTaskHandles } from "./rerankTaskHandles.js";
import type { CrossEncoderDescription, CrossEncoderSpec, ScoreTask } from "./rerankWorkerProtocol.js";

export type OnnxRerankOptions = EncoderPoolOptions & {
    spec: CrossEncoderSpec;
    /** The manifest's `maxInputTokens`; null = the model's own limit. */
    maxInputTokens: number | null;
};

/** Pairs per tokenize task: a 1,000-document request should not hold one worker for long. */
const tokenizeChunk = 128;
/** Used when the model declares no limit of its own. */
const fallbackMaxInputTokens = 512;

/**
 * A transformers.js cross-encoder run in the shared worker pool (task module `rerankTasks.ts`). A request becomes
 * a few tokenize tasks (the pairs, as the model's tokenizer pairs them) and then one task per batch of pairs,
 * sorted by length; the batches run in parallel on the pool, taking turns with other requests' tasks.
 */
export class OnnxRerankEngine implements RerankEngine {
    private constructor(readonly info: RerankEngineInfo, private readonly model: PlacedModel<CrossEncoderSpec, CrossEncoderDescription>,
                        private readonly options: OnnxRerankOptions) {}

    /** Loads the model (in one of its workers; the others load it on first use) and reads its shape. */
    static load(pool: WorkerPool, id: string, options: OnnxRerankOptions): Promise<OnnxRerankEngine> {
        return PlacedModel.place(pool, {...options, id, tasks: rerankTaskHandles, preload: "one"}, (model) => {
            const own = model.described.maxPositions;
            let maxInputTokens = options.maxInputTokens ?? own ?? fallbackMaxInputTokens;
            if (own != null && maxInputTokens > own) {
                options.onWarning?.(`Model '${id}': maxInputTokens ${maxInputTokens} is more than the model's own limit of ${own} tokens; using ${own}.`);
                maxInputTokens = own;
            }
            return new OnnxRerankEngine({id, maxInputTokens}, model, options);
        });
    }

    load(): EngineLoad {
        return this.model.load();
    }

    describe() {
        return {maxInputTokens: this.info.maxInputTokens};
    }

    rank(query: string, documents: string[], options: RankOptions): Promise<RankResult> {
        return this.model.admit(options.signal, () => this.run(query, documents, options.signal));
    }

    private async run(query: string, documents: string[], signal: AbortSignal): Promise<RankResult> {
        // The query with an empty document last: the query's own length.
        const {ids, typeIds} = await this.tokenize(query, [...documents, ""], signal);
        signal.throwIfAborted();
        const queryLength = ids.pop()!.length;
        typeIds.pop();
        if (queryLength > this.info.maxInputTokens)
            throw new PairTooLongError(null, queryLength, this.info.maxInputTokens);
        const lengths = ids.map((sequence) => sequence.length);
        const tooLong = lengths.findIndex((length) => length > this.info.maxInputTokens);
        if (tooLong >= 0)
            throw new PairTooLongError(tooLong, lengths[tooLong], this.info.maxInputTokens);

        const scores: number[] = new Array(documents.length);
        const batches = planBatches(lengths, this.options.maxBatchSize ?? 32, this.options.maxBatchTokens ?? 16_384);
        await runBatches(batches, signal, async (batch, batchSignal) => {
            const task: ScoreTask = {model: this.options.spec, ids: batch.map((index) => ids[index]), typeIds: batch.map((index) => typeIds[index])};
            const result = await this.model.run(rerankTaskHandles.score, task, {signal: batchSignal});
            if (!result.cancelled)
                batch.forEach((index, position) => scores[index] = result.scores[position]);
        });
        return {scores, promptTokens: lengths.reduce((sum, length) => sum + length, 0)};
    }

    private async tokenize(query: string, documents: string[], signal: AbortSignal): Promise<{ids: Int32Array[], typeIds: Int32Array[]}> {
        const chunks: string[][] = [];
        for (let start = 0; start < documents.length; start += tokenizeChunk)
            chunks.push(documents.slice(start, start + tokenizeChunk));
        const results = await Promise.all(chunks.map((chunk) =>
            this.model.run(rerankTaskHandles.tokenize, {model: this.options.spec, query, documents: chunk}, {signal})));
        return {ids: results.flatMap((result) => result.ids), typeIds: results.flatMap((result) => result.typeIds)};
    }

    /** Refuses new requests, lets the admitted ones finish, then frees the model in the workers that loaded it. */
    dispose(): Promise<void> {
        return this.model.dispose();
    }
}
