/**
 * The images capability's task module, run in the shared worker pool: Stable Diffusion folders (diffusers/optimum
 * ONNX layout) loaded once per worker and kept; a whole generation (text encoding, every denoising step, the VAE)
 * runs as one task, sending step progress and previews through the pool's progress channel.
 */
import { transferable } from "../../../core/workers/transferable.js";
import type { TaskContext, TaskModule } from "../../../core/workers/WorkerTask.js";
import { WorkerModelCache } from "../../../runtimes/onnx/WorkerModelCache.js";
import { generateImages } from "./generateImages.js";
import { loadSdPipeline, type SdPipeline } from "./loadSdPipeline.js";
import type { ImageProgress } from "../ImageEngine.js";
import type { GenerateTask, GenerateTaskResult, SdDescribeResult, SdModelSpec } from "./workerProtocol.js";

/** Keyed by everything that changes the loaded sessions, not only the entry's id. */
const pipelines = new WorkerModelCache<SdModelSpec, SdPipeline>(loadSdPipeline,
    (pipeline) => Promise.all([pipeline.textEncoder, pipeline.unet, pipeline.vaeDecoder, pipeline.previewDecoder].map((session) => session?.release())),
    (spec) => `${spec.key}\0${spec.folder}\0${spec.threads}\0${spec.previewDecoder ?? ""}`);

export const tasks = {
    describe: async (spec: SdModelSpec): Promise<SdDescribeResult> => (await pipelines.get(spec)).describe,
    generate: async (task: GenerateTask, context: TaskContext<ImageProgress>): Promise<GenerateTaskResult> => {
        const result = await generateImages(await pipelines.get(task.model), task.job, context, {maxUnetBatch: task.model.maxUnetBatch});
        return transferable(result, result.images.map((image) => image.rgb.buffer as ArrayBuffer));
    },
    /** How many pipelines this worker holds (memory checks: one copy per process with manifest `workers: 1`). */
    loadedPipelines: () => pipelines.size,
    /** Frees the pipeline's sessions in this worker (its engine was disposed). */
    release: (spec: SdModelSpec) => pipelines.release(spec)
} satisfies TaskModule;
