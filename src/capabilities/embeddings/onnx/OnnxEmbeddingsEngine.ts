import type { EncoderPoolOptions } from "../../../runtimes/onnx/EncoderPoolOptions.js";
import { InputTooLongError } from "../InputTooLongError.js";
import type { EngineLoad } from "../../../core/engines/EngineLoad.js";
import type { WorkerPool } from "../../../core/workers/WorkerPool.js";
import { PlacedModel } from "../../../runtimes/onnx/PlacedModel.js";
import type { EmbeddingInput, EmbeddingsEngine, EmbeddingsEngineInfo, EmbedOptions, EmbedResult } from "../EmbeddingsEngine.js";
import { finishVector } from "./pooling.js";
import { planBatches, runBatches } from "../../../runtimes/onnx/planBatches.js";
import type { DescribeResult, EmbedTask, OnnxModelSpec, TokenizeTask } from "./workerProtocol.js";
import { embeddingTaskHandles } from "./embeddingTaskHandles.js";

export type OnnxEmbeddingsOptions = EncoderPoolOptions & {
    spec: OnnxModelSpec;
    /** The manifest's `maxInputTokens`; null = the model's own limit. */
    maxInputTokens: number | null;
    matryoshka: boolean | number[];
    normalize: boolean;
};

/** Texts per tokenize task: tokenizing is cheap, but a 2048-item request should not hold one worker for long. */
const tokenizeChunk = 256;
/** Used when the model declares no limit of its own. */
const fallbackMaxInputTokens = 512;

/**
 * A transformers.js embedding model run in the shared worker pool (task module `embeddingTasks.ts`).
 * One request becomes a few tokenize tasks and then one task per batch; the batches of a request
 * run in parallel on the pool, taking turns with other requests' tasks.
 */
export class OnnxEmbeddingsEngine implements EmbeddingsEngine {
    private constructor(readonly info: EmbeddingsEngineInfo, private readonly model: PlacedModel<OnnxModelSpec, DescribeResult>,
                        private readonly options: OnnxEmbeddingsOptions) {}

    /** Loads the model (in one of its workers; the others load it on first use) and reads its shape. */
    static load(pool: WorkerPool, id: string, options: OnnxEmbeddingsOptions): Promise<OnnxEmbeddingsEngine> {
        return PlacedModel.place(pool, {...options, id, tasks: embeddingTaskHandles, preload: "one"},
            (model) => new OnnxEmbeddingsEngine(OnnxEmbeddingsEngine.infoOf(id, model.described, options), model, options));
    }

    /** The engine's shape: the manifest's input limit, never above the model's own (with a warning). */
    private static infoOf(id: string, described: DescribeResult, options: OnnxEmbeddingsOptions): EmbeddingsEngineInfo {
        const ownLimit = described.maxPositions ?? fallbackMaxInputTokens;
        let maxInputTokens = options.maxInputTokens ?? ownLimit;
        if (described.maxPositions != null && maxInputTokens > described.maxPositions) {
            options.onWarning?.(`Model '${id}': maxInputTokens ${maxInputTokens} is more than the model's own limit of ${described.maxPositions} tokens; using ${described.maxPositions}.`);
            maxInputTokens = described.maxPositions;
        }
        return {
            id, maxInputTokens, dimensions: described.dimensions, vocabularySize: described.vocabularySize,
            matryoshka: options.matryoshka, normalize: options.normalize
        };
    }

    load(): EngineLoad {
        return this.model.load();
    }

    describe() {
        return {dimensions: this.info.dimensions, maxInputTokens: this.info.maxInputTokens};
    }

    embed(inputs: EmbeddingInput[], options: EmbedOptions): Promise<EmbedResult> {
        return this.model.admit(options.signal, () => this.run(inputs, options));
    }

    private async run(inputs: EmbeddingInput[], options: EmbedOptions): Promise<EmbedResult> {
        const {signal} = options;
        const ids = await this.tokenize(inputs, signal);
        signal.throwIfAborted();
        const lengths = ids.map((sequence) => sequence.length);
        const tooLong = lengths.findIndex((length) => length > this.info.maxInputTokens);
        if (tooLong >= 0)
            throw new InputTooLongError(tooLong, lengths[tooLong], this.info.maxInputTokens);

        const vectors: Float32Array[] = new Array(inputs.length);
        const batches = planBatches(lengths, this.options.maxBatchSize ?? 32, this.options.maxBatchTokens ?? 16_384);
        await runBatches(batches, signal, async (batch, batchSignal) => {
            const task: EmbedTask = {model: this.options.spec, ids: batch.map((index) => ids[index])};
            const result = await this.model.run(embeddingTaskHandles.embed, task, {signal: batchSignal});
            if (!result.cancelled)
                batch.forEach((index, position) => vectors[index] = finishVector(result.vectors[position], {dimensions: options.dimensions, normalize: this.info.normalize}));
        });
        return {vectors, promptTokens: lengths.reduce((sum, length) => sum + length, 0)};
    }

    /** Texts are tokenized in the pool; token-id inputs are used as they are. */
    private async tokenize(inputs: EmbeddingInput[], signal: AbortSignal): Promise<Int32Array[]> {
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
            const task: TokenizeTask = {model: this.options.spec, texts: chunk.map((index) => inputs[index] as string)};
            const result = await this.model.run(embeddingTaskHandles.tokenize, task, {signal});
            chunk.forEach((index, position) => ids[index] = result.ids[position]);
        }));
        return ids;
    }

    /** Refuses new requests, lets the admitted ones finish, then frees the model in the workers that loaded it. */
    dispose(): Promise<void> {
        return this.model.dispose();
    }
}
