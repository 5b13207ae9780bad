// Placeholder: the image-pipeline branch replaces this file with the engine (Stable Diffusion in the worker pool).
import type { ModelEntry } from "../../../core/registry/ModelEntry.js";
import type { WorkerPool } from "../../../core/workers/WorkerPool.js";
import type { ImageEngine } from "../ImageEngine.js";
import type { ImageSettings } from "../imagesManifest.js";

export type OnnxImageEngineOptions = {threads: number, parallel: number, queueSize: number, onWarning?(message: string): void};

export const OnnxImageEngine = {
    async load(_pool: WorkerPool, entry: ModelEntry<ImageSettings>, _options: OnnxImageEngineOptions): Promise<ImageEngine> {
        throw new Error(`Model '${entry.id}': the ONNX image engine is not built yet.`);
    }
};
