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

function loaded(spec: SdModelSpec): Promise<SdPipeline> {
    const key = `${spec.key}\0${spec.folder}\0${spec.threads}\0${spec.previewDecoder ?? ""}`;
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
    }
} satisfies TaskModule;
