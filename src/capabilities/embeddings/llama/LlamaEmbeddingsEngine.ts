import type { Llama, LlamaEmbeddingContext, LlamaModel, Token } from "node-llama-cpp";
import type { EngineLoad } from "../../../core/engines/EngineLoad.js";
import type { EmbeddingInput, EmbeddingsEngine, EmbeddingsEngineInfo, EmbedOptions, EmbedResult } from "../EmbeddingsEngine.js";
import { AdmissionQueue } from "../../../core/admission/AdmissionQueue.js";
import { EngineDisposedError } from "../../../core/engines/EngineDisposedError.js";
import { InputTooLongError } from "../InputTooLongError.js";
import { loadInputModel, type InputModelOptions } from "../../../runtimes/llama/loadInputModel.js";
import { finishVector } from "../onnx/pooling.js";

/** `threads`: 1 by default (see README "Why threads default to 1"). */
export type LlamaEmbeddingsOptions = InputModelOptions & {
    id: string;
    matryoshka: boolean | number[];
    normalize: boolean;
    queueSize: number;
};

/**
 * A GGUF embedding model (nomic-embed, bge, ...) on node-llama-cpp's embedding context. Inputs are
 * evaluated one after another on the context's one sequence; pooling is the model's own (llama.cpp
 * reads it from the GGUF), normalisation and Matryoshka truncation are the server's, as for ONNX.
 * Token counts include the BOS/EOS tokens the context adds.
 */
export class LlamaEmbeddingsEngine implements EmbeddingsEngine {
    /** One request at a time: the embedding context has one sequence. */
    private readonly admission: AdmissionQueue;
    private disposed: Promise<void> | null = null;

    private constructor(readonly info: EmbeddingsEngineInfo, private readonly model: LlamaModel, private readonly context: LlamaEmbeddingContext, queueSize: number) {
        this.admission = new AdmissionQueue(1, queueSize, info.id);
    }

    static async load(llama: Llama, options: LlamaEmbeddingsOptions): Promise<LlamaEmbeddingsEngine> {
        return loadInputModel(llama, options, async (model, size, maxInputTokens) => {
            const context = await model.createEmbeddingContext(size);
            const probe = await context.getEmbeddingFor("a");
            const info: EmbeddingsEngineInfo = {
                id: options.id, maxInputTokens, dimensions: probe.vector.length, vocabularySize: model.fileInfo.metadata.tokenizer?.ggml?.tokens?.length ?? 0,
                matryoshka: options.matryoshka, normalize: options.normalize
            };
            return new LlamaEmbeddingsEngine(info, model, context, options.queueSize);
        });
    }

    load(): EngineLoad {
        return this.admission.load();
    }

    describe() {
        return {dimensions: this.info.dimensions, maxInputTokens: this.info.maxInputTokens};
    }

    embed(inputs: EmbeddingInput[], options: EmbedOptions): Promise<EmbedResult> {
        return this.admission.run(1, options.signal, () => this.run(inputs, options));
    }

    private async run(inputs: EmbeddingInput[], options: EmbedOptions): Promise<EmbedResult> {
        options.signal.throwIfAborted();
        const tokenized = inputs.map((input) => typeof input === "string" ? input : [...input] as Token[]);
        const lengths = tokenized.map((input) => this.context.calculateInputLength(typeof input === "string" ? input : [...input]));
        const tooLong = lengths.findIndex((length) => length > this.info.maxInputTokens);
        if (tooLong >= 0)
            throw new InputTooLongError(tooLong, lengths[tooLong], this.info.maxInputTokens);
        const vectors: Float32Array[] = [];
        for (const input of tokenized) {
            options.signal.throwIfAborted();
            const embedding = await this.context.getEmbeddingFor(input);
            vectors.push(finishVector(Float32Array.from(embedding.vector), {dimensions: options.dimensions, normalize: this.info.normalize}));
        }
        return {vectors, promptTokens: lengths.reduce((sum, length) => sum + length, 0)};
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
