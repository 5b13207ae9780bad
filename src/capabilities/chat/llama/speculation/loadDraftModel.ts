import fs from "node:fs";
import path from "node:path";
import type { Llama, LlamaContext, LlamaModel } from "node-llama-cpp";
import { ensureDraftContextCompatible } from "../../../../runtimes/llama/internals.js";
import { loadLlamaModel } from "../../../../runtimes/llama/loadLlamaModel.js";
import { IncompatibleDraftModelError } from "./IncompatibleDraftModelError.js";

/** A draft model, its context, and what a step of it costs beside a step of the target. */
export type DraftModel = {model: LlamaModel, context: LlamaContext, stepShare: number};

/**
 * The draft model of a chat model and its context: one sequence per target sequence, so each request's
 * draft keeps its own prefix beside the target's (the draft sequence reuses the prefix it shares with the
 * next prompt, as the target's prompt cache does). `stepShare`: a draft step's cost beside a target step. Refused at load, naming both files, when llama.cpp would
 * not verify its drafts against the target (another vocabulary: type, size, special tokens or token texts).
 */
export async function loadDraftModel(llama: Llama, target: {context: LlamaContext, modelPath: string}, options: {
    modelPath: string, threads: number, gpuLayers: "auto" | "max" | number, flashAttention: boolean | "auto"
}): Promise<DraftModel> {
    const model = await loadLlamaModel(llama, {modelPath: options.modelPath, gpuLayers: llama.gpu === false ? 0 : options.gpuLayers});
    try {
        const context = await model.createContext({
            contextSize: target.context.contextSize,
            sequences: target.context.totalSequences,
            threads: options.threads,
            flashAttention: options.flashAttention,
            failedCreationRemedy: false
        });
        try {
            ensureDraftContextCompatible(target.context, context);
        } catch (error) {
            await context.dispose();
            throw new IncompatibleDraftModelError(path.basename(options.modelPath), path.basename(target.modelPath), (error as Error).message);
        }
        // What a step of the draft costs beside one of the target: about the share of the weights it reads.
        const stepShare = fs.statSync(options.modelPath).size / fs.statSync(target.modelPath).size;
        return {model, context, stepShare};
    } catch (error) {
        await model.dispose();
        throw error;
    }
}
