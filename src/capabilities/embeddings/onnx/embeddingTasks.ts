/**
 * The embeddings capability's task module, run in the shared worker pool: transformers.js (ONNX Runtime) models, loaded once per
 * worker and kept. Pooling happens here, so only one vector per input crosses back to the main thread.
 */
import { AutoModel, type Tensor } from "@huggingface/transformers";
import { loadEncoder, type LoadedEncoder } from "../../../runtimes/onnx/loadEncoder.js";
import { encoderInputs } from "../../../runtimes/onnx/encoderInputs.js";
import { poolHiddenStates, splitRows } from "./pooling.js";
import type { TaskContext, TaskModule } from "../../../core/workers/WorkerTask.js";
import { WorkerModelCache } from "../../../runtimes/onnx/WorkerModelCache.js";
import type { DescribeResult, EmbedTask, EmbedTaskResult, OnnxModelSpec, TokenizeResult, TokenizeTask } from "./workerProtocol.js";

const models = new WorkerModelCache<OnnxModelSpec, LoadedEncoder>((spec) => loadEncoder(AutoModel, spec), (loaded) => loaded.model.dispose());
const loaded = (spec: OnnxModelSpec) => models.get(spec);

export const tasks = {
    describe: (model: OnnxModelSpec) => describe(model),
    tokenize: (task: TokenizeTask) => tokenize(task.model, task.texts),
    embed: (task: EmbedTask, context: TaskContext) => embed(task, context),
    /** Frees the model's session in this worker (its engine was disposed). */
    release: (spec: OnnxModelSpec) => models.release(spec)
} satisfies TaskModule;

async function describe(spec: OnnxModelSpec): Promise<DescribeResult> {
    const {tokenizer, config, maxPositions} = await loaded(spec);
    const ids = tokenizer.encode("a");
    const [vector] = await embedIds(spec, [Int32Array.from(ids)]);
    let vocabularySize = typeof config.vocab_size === "number" ? config.vocab_size : 0;
    if (vocabularySize === 0)
        for (const id of tokenizer.get_vocab().values())
            vocabularySize = Math.max(vocabularySize, id + 1);
    return {maxPositions, dimensions: vector.length, vocabularySize};
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
    const output = await model(encoderInputs(sequences, padId)) as Record<string, Tensor>;
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
