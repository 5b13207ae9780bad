/**
 * The vision chat engine's task module, run in the shared worker pool: vision-language models through transformers.js
 * (ONNX Runtime), loaded once per worker and kept (WorkerModelCache).
 */
import type { TaskContext, TaskModule } from "../../../../core/workers/WorkerTask.js";
import { WorkerModelCache } from "../../../../runtimes/onnx/WorkerModelCache.js";
import { VisionModel } from "./VisionModel.js";
import { visionDecisions } from "./visionDecisions.js";
import type { VisionDecisionTask, VisionDetokenizeTask, VisionGenerateTask, VisionModelDescription, VisionModelSpec, VisionProgress, VisionPromptTask, VisionTokenizeTask } from "./visionWorkerProtocol.js";

const models = new WorkerModelCache<VisionModelSpec, VisionModel>(VisionModel.load, (model) => model.dispose());

export const tasks = {
    describe: async (spec: VisionModelSpec): Promise<VisionModelDescription> => (await models.get(spec)).description,
    /** The prompt's tokens (the template, the images' tokens), as `generate` would evaluate them. */
    promptTokens: async (task: VisionPromptTask): Promise<number> => (await models.get(task.model)).promptTokens(task),
    /** One choice, its text sent as it comes. */
    generate: async (task: VisionGenerateTask, context: TaskContext<VisionProgress>) => (await models.get(task.model)).generate(task, context),
    tokenize: async (task: VisionTokenizeTask) => (await models.get(task.model)).tokenize(task),
    detokenize: async (task: VisionDetokenizeTask) => (await models.get(task.model)).detokenize(task.tokens),
    /** A decision job's label probabilities (visionDecisions). */
    decide: async (task: VisionDecisionTask, context: TaskContext) => visionDecisions(await models.get(task.model), task, context),
    release: (spec: VisionModelSpec) => models.release(spec)
} satisfies TaskModule;
