import type { Llama, LlamaModel } from "node-llama-cpp";
import { loadLlamaModel } from "./loadLlamaModel.js";

export type InputModelOptions = {
    modelPath: string;
    /** null = the model's training context. */
    maxInputTokens: number | null;
    /** CPU threads of the context. */
    threads: number;
    /** Hears how far the weights' load is, 0 to 1 (node-llama-cpp's `onLoadProgress`). */
    onLoadProgress?: (fraction: number) => void;
};

/** What a one-sequence context (embedding, ranking) is created with: inputs up to `maxInputTokens` fit. */
export type InputContextSize = {contextSize: number, batchSize: number, threads: number};

/**
 * A GGUF model whose inputs are evaluated whole on one sequence (embeddings, rerank), and what `open` makes of it
 * (its context, probes, the engine): inputs up to `maxInputTokens` (the model's training context at most; node-llama-cpp
 * needs an input shorter than the context, hence one token more). The model is disposed again when `open` fails.
 */
export async function loadInputModel<T>(llama: Llama, options: InputModelOptions,
    open: (model: LlamaModel, size: InputContextSize, maxInputTokens: number) => Promise<T>): Promise<T> {
    const model = await loadLlamaModel(llama, {modelPath: options.modelPath, onLoadProgress: options.onLoadProgress});
    try {
        const maxInputTokens = Math.min(options.maxInputTokens ?? model.trainContextSize, model.trainContextSize);
        return await open(model, {contextSize: maxInputTokens + 1, batchSize: maxInputTokens + 1, threads: options.threads}, maxInputTokens);
    } catch (error) {
        await model.dispose();
        throw error;
    }
}
