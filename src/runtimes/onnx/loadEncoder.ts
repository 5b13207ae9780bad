import { AutoTokenizer, type PreTrainedModel, type PreTrainedTokenizer } from "@huggingface/transformers";
import { sessionOptions } from "./sessionOptions.js";
import { transformersInternals } from "./transformersInternals.js";

/** Where a worker finds an encoder (a transformers.js folder) and how it runs it. */
export type EncoderFiles = {
    /** Folder with config.json, tokenizer.json and onnx/model*.onnx. */
    folder: string;
    /** transformers.js dtype: picks onnx/model.onnx (fp32), model_quantized.onnx (q8), model_fp16.onnx (fp16), ... */
    dtype: string;
    /** Base name of the ONNX file in onnx/ without `.onnx` and dtype suffix; null = "model". */
    modelFileName: string | null;
    /** ONNX Runtime intra-op threads of this model's session in each worker. */
    threads: number;
};

export type LoadedEncoder = {
    tokenizer: PreTrainedTokenizer;
    model: PreTrainedModel;
    config: Record<string, unknown>;
    /** The id inputs are padded with (config `pad_token_id`, else the tokenizer's). */
    padId: number;
    /** The model's own input limit (config `max_position_embeddings` / tokenizer `model_max_length`), when it declares one. */
    maxPositions: number | null;
};

/**
 * Loads an encoder and its tokenizer in a worker (offline: the caller's WorkerModelCache set that), as `modelClass`
 * (`AutoModel` for embeddings, `AutoModelForSequenceClassification` for a cross-encoder), on the CPU.
 */
export async function loadEncoder(modelClass: {from_pretrained: typeof PreTrainedModel.from_pretrained}, files: EncoderFiles): Promise<LoadedEncoder> {
    const tokenizer = await AutoTokenizer.from_pretrained(files.folder, {local_files_only: true});
    const model = await modelClass.from_pretrained(files.folder, {
        local_files_only: true,
        device: "cpu",
        dtype: files.dtype as "fp32",
        ...(files.modelFileName != null ? {model_file_name: files.modelFileName} : {}),
        session_options: sessionOptions(files.threads)
    });
    const config = transformersInternals.modelConfig(model);
    const padId = typeof config.pad_token_id === "number" ? config.pad_token_id : (tokenizer.pad_token_id ?? 0);
    const limits = [config.max_position_embeddings, transformersInternals.tokenizerMaxLength(tokenizer)]
        .filter((value): value is number => typeof value === "number" && Number.isInteger(value) && value > 0 && value < 1e7);
    return {tokenizer, model, config, padId, maxPositions: limits.length === 0 ? null : Math.min(...limits)};
}
