import path from "node:path";
import type { EngineLoad } from "../../../core/engines/EngineLoad.js";
import type { ModelEntry } from "../../../core/registry/ModelEntry.js";
import type { WorkerPool } from "../../../core/workers/WorkerPool.js";
import { PlacedModel } from "../../../runtimes/onnx/PlacedModel.js";
import type { GenerateOptions, ImageEngine, ImageJob, ImageResult } from "../ImageEngine.js";
import type { ImageSettings } from "../imagesManifest.js";
import type { GenerateTask, SdDescribeResult, SdModelSpec } from "./workerProtocol.js";
import { imageTaskHandles } from "./imageTaskHandles.js";

export type OnnxImageEngineOptions = {
    /** ONNX Runtime intra-op threads per session. */
    threads: number;
    /** Generations run at once (each holds one worker for its whole run). */
    parallel: number;
    /** Generations that may wait beyond those; more: QueueFullError (503). */
    queueSize: number;
    /**
     * UNet rows per run at most (each image is 2 rows with guidance); default all rows of a generation in one run.
     * Results do not depend on it; lower it when n = 4 at large sizes needs too much memory.
     */
    maxUnetBatch?: number;
    /** How many of the pool's workers load the pipeline (manifest `workers`: 1 for a large model); default all. */
    workers?: number;
    onWarning?(message: string): void;
};

/** Smallest side accepted: 8 latent pixels, what SD's three UNet downsamplings reduce to one. */
const minSide = 64;

/**
 * A Stable Diffusion folder run in the shared worker pool (task module `imageTasks.ts`): one generation is one
 * task (all n images batched in it), its step messages and previews arriving through `onProgress`.
 *
 * Sizes: each side a multiple of 8 (the VAE factor) from 64 to twice the native size (quality falls apart beyond
 * that, and memory grows with the square); a UNet export with a fixed height and width accepts only its size.
 */
export class OnnxImageEngine implements ImageEngine {
    readonly id: string;
    readonly described: SdDescribeResult;
    readonly nativeSize: {width: number, height: number};
    readonly sizeBounds: {min: number, max: number, multiple: number};
    readonly maxPromptTokens: number;

    private constructor(private readonly model: PlacedModel<SdModelSpec, SdDescribeResult>, private readonly options: OnnxImageEngineOptions) {
        this.id = model.id;
        const described = this.described = model.described;
        this.nativeSize = {width: described.nativeWidth, height: described.nativeHeight};
        const native = Math.max(described.nativeWidth, described.nativeHeight);
        this.sizeBounds = described.fixedSize
            ? {min: Math.min(described.nativeWidth, described.nativeHeight), max: native, multiple: described.vaeScaleFactor}
            : {min: minSide, max: 2 * native, multiple: described.vaeScaleFactor};
        this.maxPromptTokens = described.textWindow;
    }

    /**
     * Loads the pipeline in one of its workers (the others of its placement load it on first use;
     * manifest `workers: 1` keeps a large model to one copy in the process) and reads its sizes.
     */
    static async load(pool: WorkerPool, entry: ModelEntry<ImageSettings>, options: OnnxImageEngineOptions): Promise<OnnxImageEngine> {
        const previewDecoder = entry.settings.previewDecoder;
        const spec: SdModelSpec = {
            key: entry.id,
            folder: entry.path,
            threads: options.threads,
            previewDecoder: previewDecoder == null ? null : path.resolve(entry.path, previewDecoder),
            maxUnetBatch: options.maxUnetBatch ?? null
        };
        return PlacedModel.place(pool, {...options, id: entry.id, spec, tasks: imageTaskHandles, preload: "one"}, (model) => new OnnxImageEngine(model, options));
    }

    load(): EngineLoad {
        return this.model.load();
    }

    describe() {
        const {nativeWidth, nativeHeight, scalingFactor, textWindow} = this.described;
        return {size: `${nativeWidth}x${nativeHeight}`, scalingFactor, textWindow, predictionType: this.described.scheduler.predictionType};
    }

    generate(job: ImageJob, options: GenerateOptions): Promise<ImageResult> {
        const invalid = this.invalidJob(job);
        if (invalid != null)
            return Promise.reject(new RangeError(`Model '${this.id}': ${invalid}`));
        return this.model.admit(options.signal, async () => {
            const task: GenerateTask = {model: this.model.spec, job};
            const result = await this.model.run(imageTaskHandles.generate, task, {signal: options.signal, onProgress: options.onProgress});
            if (result.truncated)
                this.options.onWarning?.(`Model '${this.id}': a prompt was longer than the text encoder's ${this.maxPromptTokens} tokens and was truncated (as diffusers does).`);
            return result;
        });
    }

    /** The API layer checks every field against the spec; this only keeps a bad job from reaching a worker. */
    private invalidJob(job: ImageJob): string | null {
        const {min, max, multiple} = this.sizeBounds;
        for (const side of [job.width, job.height])
            if (!Number.isInteger(side) || side < min || side > max || side % multiple !== 0)
                return `size ${job.width}x${job.height} is outside ${min}..${max} (multiples of ${multiple}).`;
        if (job.seeds.length < 1 || job.seeds.length > 8 || !job.seeds.every((seed) => Number.isSafeInteger(seed) && seed >= 0))
            return `seeds must be 1 to 8 integers from 0 to 2^53 - 1, got ${JSON.stringify(job.seeds)}.`;
        if (!Number.isInteger(job.steps) || job.steps < 1 || job.steps > 1000)
            return `steps must be an integer from 1 to 1000, got ${job.steps}.`;
        if (!Number.isFinite(job.guidanceScale) || job.guidanceScale < 0)
            return `guidanceScale must be a finite number >= 0, got ${job.guidanceScale}.`;
        if (!Number.isInteger(job.previews) || job.previews < 0 || job.previews > 10)
            return `previews must be an integer from 0 to 10, got ${job.previews}.`;
        return null;
    }

    /** Refuses new requests, lets the admitted ones finish, then frees the pipeline's sessions in its workers. */
    dispose(): Promise<void> {
        return this.model.dispose();
    }
}
