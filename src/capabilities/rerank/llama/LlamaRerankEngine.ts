import type { Llama, LlamaModel, LlamaRankingContext } from "node-llama-cpp";
import { AdmissionQueue } from "../../../core/admission/AdmissionQueue.js";
import type { EngineLoad } from "../../../core/engines/EngineLoad.js";
import { EngineDisposedError } from "../../../core/engines/EngineDisposedError.js";
import { PairTooLongError } from "../PairTooLongError.js";
import { loadInputModel, type InputModelOptions } from "../../../runtimes/llama/loadInputModel.js";
import type { RankOptions, RankResult, RerankEngine, RerankEngineInfo } from "../RerankEngine.js";

export type LlamaRerankOptions = InputModelOptions & {
    id: string;
    queueSize: number;
};

/**
 * A GGUF reranker (bge-reranker, jina-reranker: pooling type rank) on node-llama-cpp's ranking context: each
 * (query, document) pair is evaluated on the context's one sequence, as `[BOS] query [EOS] [SEP] document [EOS]`
 * (or the GGUF's own `chat_template.rerank`), and its score is the classification head's output through a sigmoid
 * (node-llama-cpp's `rank`; Qwen3 rerankers' is already a probability).
 */
export class LlamaRerankEngine implements RerankEngine {
    /** One request at a time: the ranking context has one sequence. */
    private readonly admission: AdmissionQueue;
    private disposed: Promise<void> | null = null;

    private constructor(readonly info: RerankEngineInfo, private readonly model: LlamaModel, private readonly context: LlamaRankingContext, queueSize: number) {
        this.admission = new AdmissionQueue(1, queueSize, info.id);
    }

    static async load(llama: Llama, options: LlamaRerankOptions): Promise<LlamaRerankEngine> {
        return loadInputModel(llama, options, async (model, size, maxInputTokens) =>
            new LlamaRerankEngine({id: options.id, maxInputTokens}, model, await model.createRankingContext(size), options.queueSize));
    }

    load(): EngineLoad {
        return this.admission.load();
    }

    describe() {
        return {maxInputTokens: this.info.maxInputTokens};
    }

    rank(query: string, documents: string[], options: RankOptions): Promise<RankResult> {
        return this.admission.run(1, options.signal, () => this.run(query, documents, options.signal));
    }

    private async run(query: string, documents: string[], signal: AbortSignal): Promise<RankResult> {
        signal.throwIfAborted();
        const queryLength = this.context.calculateInputLength(query, "");
        if (queryLength > this.info.maxInputTokens)
            throw new PairTooLongError(null, queryLength, this.info.maxInputTokens);
        const lengths = documents.map((document) => this.context.calculateInputLength(query, document));
        const tooLong = lengths.findIndex((length) => length > this.info.maxInputTokens);
        if (tooLong >= 0)
            throw new PairTooLongError(tooLong, lengths[tooLong], this.info.maxInputTokens);
        const scores: number[] = [];
        for (const document of documents) {
            signal.throwIfAborted();
            scores.push(await this.context.rank(query, document));
        }
        return {scores, promptTokens: lengths.reduce((sum, length) => sum + length, 0)};
    }

    dispose(): Promise<void> {
        return this.disposed ??= (async () => {
            this.admission.close(new EngineDisposedError(this.info.id));
            await this.admission.drain();
            await this.context.dispose();
            await this.model.dispose();
        })();
    }
}
