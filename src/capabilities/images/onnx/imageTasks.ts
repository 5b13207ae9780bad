/**
 * The images capability's task module, run in the shared worker pool: Stable Diffusion folders (diffusers/optimum
 * ONNX layout) loaded once per worker and kept; a whole generation (text encoding, every denoising step, the VAE)
 * runs as one task, sending step progress and previews through the pool's progress channel.
 */
import { env } from "@huggingface/transformers";
import { transferable } from "../../../core/workers/transferable.js";
import type { TaskContext, TaskModule } from "../../../core/workers/WorkerTask.js";
import { generateImages } from "./generateImages.js";
import { loadSdPipeline, type SdPipeline } from "./loadSdPipeline.js";
import type { ImageProgress } from "../ImageEngine.js";
import type { GenerateTask, GenerateTaskResult, SdDescribeResult, SdModelSpec } from "./workerProtocol.js";

// Fully offline: only the manifest's folders, never the hub.
env.allowRemoteModels = false;
env.allowLocalModels = true;
env.useFSCache = false;
env.useBrowserCache = false;

const pipelines = new Map<string, Promise<SdPipeline>>();

function keyOf(spec: SdModelSpec) {
    return `${spec.key}\0${spec.folder}\0${spec.threads}\0${spec.previewDecoder ?? ""}`;
}

function loaded(spec: SdModelSpec): Promise<SdPipeline> {
    const key = keyOf(spec);
    let pipeline = pipelines.get(key);
    if (pipeline == null) {
        pipeline = loadSdPipeline(spec);
        pipelines.set(key, pipeline);
        pipeline.catch(() => pipelines.delete(key));
    }
    return pipeline;
}

export const tasks = {
    describe: async (spec: SdModelSpec): Promise<SdDescribeResult> => (await loaded(spec)).describe,
    generate: async (task: GenerateTask, context: TaskContext<ImageProgress>): Promise<GenerateTaskResult> => {
        const result = await generateImages(await loaded(task.model), task.job, context, {maxUnetBatch: task.model.maxUnetBatch});
        return transferable(result, result.images.map((image) => image.rgb.buffer as ArrayBuffer));
    },
    /** How many pipelines this worker holds (memory checks: one copy per process with manifest `workers: 1`). */
    loadedPipelines: () => pipelines.size,
    /** Frees the pipeline's sessions in this worker (its engine was disposed). */
    release: async (spec: SdModelSpec) => {
        const pipeline = pipelines.get(keyOf(spec));
        pipelines.delete(keyOf(spec));
        const loadedPipeline = await pipeline?.catch(() => null);
        if (loadedPipeline != null)
            await Promise.all([loadedPipeline.textEncoder, loadedPipeline.unet, loadedPipeline.vaeDecoder, loadedPipeline.previewDecoder]
                .map((session) => session?.release()));
    }
} satisfies TaskModule;
