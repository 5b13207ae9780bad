/**
 * The rerank capability's task module, run in the shared worker pool: transformers.js cross-encoders (BERT, XLM-RoBERTa,
 * ... `*ForSequenceClassification`), loaded once per worker and kept. The head's logits become scores here.
 */
import { AutoModelForSequenceClassification, type Tensor } from "@huggingface/transformers";
import type { TaskContext, TaskModule } from "../../../core/workers/WorkerTask.js";
import { encoderInputs } from "../../../runtimes/onnx/encoderInputs.js";
import { loadEncoder, type LoadedEncoder } from "../../../runtimes/onnx/loadEncoder.js";
import { WorkerModelCache } from "../../../runtimes/onnx/WorkerModelCache.js";
import { relevanceScores } from "./relevanceScores.js";
import type { CrossEncoderDescription, CrossEncoderSpec, PairTokenizeResult, PairTokenizeTask, ScoreTask, ScoreTaskResult } from "./rerankWorkerProtocol.js";

const models = new WorkerModelCache<CrossEncoderSpec, LoadedEncoder>((spec) => loadEncoder(AutoModelForSequenceClassification, spec), (loaded) => loaded.model.dispose());

export const tasks = {
    describe: (spec: CrossEncoderSpec) => describe(spec),
    tokenize: (task: PairTokenizeTask) => tokenizePairs(task),
    score: (task: ScoreTask, context: TaskContext) => score(task, context),
    /** Frees the model's session in this worker (its engine was disposed). */
    release: (spec: CrossEncoderSpec) => models.release(spec)
} satisfies TaskModule;

async function describe(spec: CrossEncoderSpec): Promise<CrossEncoderDescription> {
    const {maxPositions} = await models.get(spec);
    const {ids, typeIds} = await tokenizePairs({model: spec, query: "a", documents: ["a"]});
    const logits = await forward(spec, ids, typeIds);
    return {maxPositions, labels: logits.dims[1] ?? 1};
}

async function tokenizePairs({model: spec, query, documents}: PairTokenizeTask): Promise<PairTokenizeResult> {
    const {tokenizer} = await models.get(spec);
    const ids: Int32Array[] = [];
    const typeIds: Int32Array[] = [];
    for (const document of documents) {
        const encoded = tokenizer(query, {text_pair: document, return_tensor: false}) as {input_ids: number[], token_type_ids?: number[]};
        ids.push(Int32Array.from(encoded.input_ids));
        typeIds.push(encoded.token_type_ids == null ? new Int32Array(encoded.input_ids.length) : Int32Array.from(encoded.token_type_ids));
    }
    return {ids, typeIds};
}

async function score(task: ScoreTask, context: TaskContext): Promise<ScoreTaskResult> {
    // A batch that has not started when its request is cancelled is skipped; a running one finishes.
    if (context.cancelled)
        return {cancelled: true};
    const logits = await forward(task.model, task.ids, task.typeIds);
    return {cancelled: false, scores: relevanceScores(logits.data as Float32Array, logits.dims)};
}

/** One forward pass over right-padded pairs: the head's logits [batch, labels]. */
async function forward(spec: CrossEncoderSpec, ids: Int32Array[], typeIds: Int32Array[]): Promise<Tensor> {
    const {model, padId} = await models.get(spec);
    const output = await model(encoderInputs(ids, padId, typeIds)) as Record<string, Tensor>;
    const logits = output.logits;
    if (logits == null || logits.dims.length !== 2)
        throw new Error(`Model ${spec.key} has no [batch, labels] 'logits' output (is it a *ForSequenceClassification export?)`);
    return logits;
}
