/**
 * The embeddings capability's task module, run in the shared worker pool: transformers.js (ONNX Runtime) models, loaded once per
 * worker and kept. Pooling happens here, so only one vector per input crosses back to the main thread.
 */
import { AutoModel, AutoTokenizer, Tensor, type PreTrainedModel, type PreTrainedTokenizer } from "@huggingface/transformers";
import { poolHiddenStates, splitRows } from "./pooling.js";
import type { TaskContext, TaskModule } from "../../../core/workers/WorkerTask.js";
import { sessionOptions } from "../../../runtimes/onnx/sessionOptions.js";
import { transformersInternals } from "../../../runtimes/onnx/transformersInternals.js";
import { WorkerModelCache } from "../../../runtimes/onnx/WorkerModelCache.js";
import type { DescribeResult, EmbedTask, EmbedTaskResult, OnnxModelSpec, TokenizeResult, TokenizeTask } from "./workerProtocol.js";

type LoadedModel = {
    tokenizer: PreTrainedTokenizer;
    model: PreTrainedModel;
    config: Record<string, unknown>;
    padId: number;
};

const models = new WorkerModelCache<OnnxModelSpec, LoadedModel>((spec) => loadModel(spec), (loaded) => loaded.model.dispose());
const loaded = (spec: OnnxModelSpec) => models.get(spec);

async function loadModel(spec: OnnxModelSpec): Promise<LoadedModel> {
    const tokenizer = await AutoTokenizer.from_pretrained(spec.folder, {local_files_only: true});
    const model = await AutoModel.from_pretrained(spec.folder, {
        local_files_only: true,
        device: "cpu",
        dtype: spec.dtype as "fp32",
        ...(spec.modelFileName != null ? {model_file_name: spec.modelFileName} : {}),
        session_options: sessionOptions(spec.threads)
    });
    const config = transformersInternals.modelConfig(model);
    const padId = typeof config.pad_token_id === "number" ? config.pad_token_id : (tokenizer.pad_token_id ?? 0);
    return {tokenizer, model, config, padId};
}

export const tasks = {
    describe: (model: OnnxModelSpec) => describe(model),
    tokenize: (task: TokenizeTask) => tokenize(task.model, task.texts),
    embed: (task: EmbedTask, context: TaskContext) => embed(task, context),
    /** Frees the model's session in this worker (its engine was disposed). */
    release: (spec: OnnxModelSpec) => models.release(spec)
} satisfies TaskModule;

async function describe(spec: OnnxModelSpec): Promise<DescribeResult> {
    const {tokenizer, config} = await loaded(spec);
    const limits = [config.max_position_embeddings, transformersInternals.tokenizerMaxLength(tokenizer)]
        .filter((value): value is number => typeof value === "number" && Number.isInteger(value) && value > 0 && value < 1e7);
    const ids = tokenizer.encode("a");
    const [vector] = await embedIds(spec, [Int32Array.from(ids)]);
    let vocabularySize = typeof config.vocab_size === "number" ? config.vocab_size : 0;
    if (vocabularySize === 0)
        for (const id of tokenizer.get_vocab().values())
            vocabularySize = Math.max(vocabularySize, id + 1);
    return {maxPositions: limits.length === 0 ? null : Math.min(...limits), dimensions: vector.length, vocabularySize};
}

async function tokenize(spec: OnnxModelSpec, texts: string[]): Promise<TokenizeResult> {
    const {tokenizer} = await loaded(spec);
    return {ids: texts.map((text) => Int32Array.from(tokenizer.encode(text)))};
}

async function embed(task: EmbedTask, context: TaskContext): Promise<EmbedTaskResult> {
    // A batch that has not started when its request is cancelled is skipped; a running one finishes.
    if (context.cancelled)
        return {cancelled: true};
    const vectors = await embedIds(task.model, task.ids);
    return {cancelled: false, vectors};
}

/** One forward pass over right-padded ids, then pooling. */
async function embedIds(spec: OnnxModelSpec, sequences: Int32Array[]): Promise<Float32Array[]> {
    const {model, padId} = await loaded(spec);
    const batch = sequences.length;
    const width = Math.max(1, ...sequences.map((ids) => ids.length));
    const inputIds = new BigInt64Array(batch * width).fill(BigInt(padId));
    const mask = new BigInt64Array(batch * width);
    sequences.forEach((ids, b) => {
        for (let s = 0; s < ids.length; s++) {
            inputIds[b * width + s] = BigInt(ids[s]);
            mask[b * width + s] = 1n;
        }
    });
    const dims = [batch, width];
    const output = await model({
        input_ids: new Tensor("int64", inputIds, dims),
        attention_mask: new Tensor("int64", mask, dims),
        token_type_ids: new Tensor("int64", new BigInt64Array(batch * width), dims)
    }) as Record<string, Tensor>;
    const lengths = sequences.map((ids) => ids.length);
    if (spec.pooling === "none") {
        const pooled = output.sentence_embedding ?? output.pooler_output ?? Object.values(output).find((tensor) => tensor.dims.length === 2);
        if (pooled == null)
            throw new Error(`Model ${spec.key} has pooling "none" but no [batch, hidden] output`);
        return splitRows(pooled.data as Float32Array, pooled.dims);
    }
    const hidden = output.last_hidden_state ?? output.token_embeddings ?? Object.values(output).find((tensor) => tensor.dims.length === 3);
    if (hidden == null)
        throw new Error(`Model ${spec.key} has no [batch, sequence, hidden] output to pool`);
    return poolHiddenStates(hidden.data as Float32Array, hidden.dims, lengths, spec.pooling);
}
