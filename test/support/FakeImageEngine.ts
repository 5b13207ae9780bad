import crypto from "node:crypto";
import type { GenerateOptions, ImageEngine, ImageJob, ImageResult } from "../../src/capabilities/images/ImageEngine.js";
import { AdmissionQueue } from "../../src/core/admission/AdmissionQueue.js";
import { EngineDisposedError } from "../../src/core/engines/EngineDisposedError.js";

export type FakeImageEngineOptions = {
    nativeSize?: {width: number, height: number};
    sizeBounds?: {min: number, max: number, multiple: number};
    parallel?: number;
    queueSize?: number;
};

/**
 * A model-free image engine for the HTTP layer: every pixel is a function of the job and the seed
 * (a smooth gradient whose colours come from a hash of prompt, negative prompt, sampler, steps,
 * guidance, size and seed), one step per macrotask with step progress and previews as the real
 * engine sends them. `hold()` parks the next generations after their first step until released,
 * so tests of disconnects and full queues need no timing.
 */
export class FakeImageEngine implements ImageEngine {
    readonly nativeSize: {width: number, height: number};
    readonly sizeBounds: {min: number, max: number, multiple: number};
    readonly maxPromptTokens = 77;
    readonly jobs: ImageJob[] = [];
    /** Abort reasons seen by generations that stopped early. */
    readonly aborts: unknown[] = [];
    private readonly admission: AdmissionQueue;
    private gate: {promise: Promise<void>, release: () => void} | null = null;
    private parkedWaiters: (() => void)[] = [];
    private parkedCount = 0;

    constructor(readonly id: string, options: FakeImageEngineOptions = {}) {
        this.nativeSize = options.nativeSize ?? {width: 64, height: 64};
        this.sizeBounds = options.sizeBounds ?? {min: 32, max: 1024, multiple: 8};
        this.admission = new AdmissionQueue(options.parallel ?? 1, options.queueSize ?? 4, id);
    }

    load() {
        return this.admission.load();
    }

    /** Generations from now on wait after their first step until the returned function is called. */
    hold(): () => void {
        let release!: () => void;
        const promise = new Promise<void>((resolve) => release = resolve);
        this.gate = {promise, release};
        return () => {
            this.gate = null;
            release();
        };
    }

    /** Resolves once `count` generations are parked at the gate. */
    parked(count = 1): Promise<void> {
        if (this.parkedCount >= count)
            return Promise.resolve();
        return new Promise((resolve) => this.parkedWaiters.push(() => this.parkedCount >= count && resolve()));
    }

    /** Refuse a job (full queue) in a rejected promise instead of a synchronous throw, as an async engine would. */
    rejectAsync = false;

    generate(job: ImageJob, options: GenerateOptions): Promise<ImageResult> {
        if (this.rejectAsync)
            return Promise.resolve().then(() => this.generateNow(job, options));
        return this.generateNow(job, options);
    }

    private generateNow(job: ImageJob, {signal, onProgress}: GenerateOptions): Promise<ImageResult> {
        this.jobs.push(job);
        // A full queue throws at once.
        return this.admission.run(1, signal, async () => {
            const started = performance.now();
            const previewSteps = Array.from({length: job.previews}, (_, index) => Math.max(1, Math.ceil((index + 1) * job.steps / (job.previews + 1))));
            try {
                for (let step = 1; step <= job.steps; step++) {
                    await new Promise((resolve) => setImmediate(resolve));
                    signal.throwIfAborted();
                    onProgress?.({type: "step", step, steps: job.steps, elapsedMs: performance.now() - started});
                    previewSteps.forEach((previewStep, partialIndex) => {
                        if (previewStep === step)
                            job.seeds.forEach((seed, image) => onProgress?.({
                                type: "preview", image, partialIndex, step,
                                ...pixels(job, seed, `preview ${partialIndex}`, job.width / 2, job.height / 2)
                            }));
                    });
                    if (step === 1 && this.gate != null)
                        await this.park(this.gate.promise, signal);
                }
            } catch (error) {
                this.aborts.push(error);
                throw error;
            }
            const words = (text: string) => text.split(/\s+/).filter((word) => word !== "").length;
            return {
                images: job.seeds.map((seed) => ({seed, ...pixels(job, seed, "final", job.width, job.height)})),
                inputTokens: words(job.prompt) + 2 + (job.negativePrompt === "" ? 0 : words(job.negativePrompt) + 2),
                truncated: false
            };
        });
    }

    async dispose() {
        this.admission.close(new EngineDisposedError(this.id));
        await this.admission.drain();
    }

    private async park(gate: Promise<void>, signal: AbortSignal) {
        this.parkedCount++;
        for (const waiter of this.parkedWaiters)
            waiter();
        try {
            await new Promise<void>((resolve, reject) => {
                const onAbort = () => reject(signal.reason);
                signal.addEventListener("abort", onAbort, {once: true});
                gate.then(() => {
                    signal.removeEventListener("abort", onAbort);
                    resolve();
                });
            });
        } finally {
            this.parkedCount--;
        }
    }
}

/** The fake's pixels: a gradient from colours hashed from everything that should change the image. */
export function pixels(job: ImageJob, seed: number, what: string, width: number, height: number) {
    const key = JSON.stringify([job.prompt, job.negativePrompt, job.sampler, job.steps, job.guidanceScale, job.width, job.height, seed, what]);
    const [r, g, b] = crypto.createHash("sha256").update(key).digest();
    const rgb = new Uint8Array(width * height * 3);
    for (let y = 0; y < height; y++)
        for (let x = 0; x < width; x++)
            rgb.set([(r + x) & 255, (g + y) & 255, (b + x + y) & 255], (y * width + x) * 3);
    return {rgb, width, height};
}
