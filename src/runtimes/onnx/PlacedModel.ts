import { AdmissionQueue } from "../../core/admission/AdmissionQueue.js";
import { EngineDisposedError } from "../../core/engines/EngineDisposedError.js";
import type { EngineLoad } from "../../core/engines/EngineLoad.js";
import type { TaskHandle } from "../../core/workers/TaskHandle.js";
import type { Placement, RunOptions, WorkerPool } from "../../core/workers/WorkerPool.js";

/** The two tasks every model's task module has: `describe` loads the model in a worker and reads its shape, `release` frees it there. */
export type ModelTasks<Spec, Description> = {
    describe: TaskHandle<Spec, Description, never>;
    release: TaskHandle<Spec, unknown, never>;
};

export type PlaceOptions<Spec extends {key: string}, Description> = {
    /** The model's id (names it in EngineDisposedError and QueueFullError). */
    id: string;
    /** What a worker needs to load the model; its `key` is the placement's (entries with the same key share the loaded model). */
    spec: Spec;
    tasks: ModelTasks<Spec, Description>;
    /** How many of the pool's workers load the model (manifest `workers`); default all. */
    workers?: number;
    /** "each": loaded in every worker of its placement before the first request (a client's first request should not pay the load); "one": in one of them, the others load it on first use. */
    preload: "each" | "one";
    /** Requests served at once. */
    parallel: number;
    /** Requests that may wait beyond those; more: QueueFullError. */
    queueSize: number;
};

/**
 * A model placed on the shared worker pool, as an ONNX engine holds it: the workers that load it
 * (its placement, acquired for the engine's life), what the model's `describe` task said of it,
 * and the admission queue of its requests. `place` loads it and hands it to the engine's own
 * constructor; a failure in either releases it again. `dispose` refuses new requests, lets the
 * admitted ones finish, then frees the model in its workers (once no other entry holds its key).
 */
export class PlacedModel<Spec extends {key: string}, Description> {
    private readonly admission: AdmissionQueue;

    private constructor(readonly id: string, readonly spec: Spec, readonly described: Description,
        private readonly pool: WorkerPool, private readonly placement: Placement, private readonly tasks: ModelTasks<Spec, Description>,
        options: PlaceOptions<Spec, Description>) {
        this.admission = new AdmissionQueue(options.parallel, options.queueSize, id);
    }

    /** Acquires the model's workers, loads and describes it there, and builds the engine with `build`; on any failure, releases the workers again and rethrows. */
    static async place<Spec extends {key: string}, Description, Built>(pool: WorkerPool, options: PlaceOptions<Spec, Description>,
        build: (model: PlacedModel<Spec, Description>) => Built): Promise<Built> {
        const {spec, tasks} = options;
        const placement: Placement = {key: spec.key, workers: options.workers ?? pool.size};
        pool.acquire(placement);
        try {
            const described = options.preload === "each"
                ? (await pool.runOnEach(tasks.describe, spec, placement))[0]
                : await pool.run(tasks.describe, spec, {placement});
            return build(new PlacedModel(options.id, spec, described, pool, placement, tasks, options));
        } catch (error) {
            await pool.release(tasks.release, spec, placement);
            throw error;
        }
    }

    /** The engine's load (running and waiting requests), for the host's balancer and metrics. */
    load(): EngineLoad {
        return this.admission.load();
    }

    /** Runs `work` once the request is admitted (`places` of `parallel`, default one); throws QueueFullError synchronously when the queue is full. */
    admit<Result>(signal: AbortSignal, work: () => Promise<Result>, places = 1): Promise<Result> {
        return this.admission.run(places, signal, work);
    }

    /** Runs one of the model's tasks on a worker of its placement. */
    run<Payload, Result, Progress>(handle: TaskHandle<Payload, Result, Progress>, payload: NoInfer<Payload>,
        options: Omit<RunOptions<NoInfer<Progress>>, "placement"> = {}): Promise<Result> {
        return this.pool.run(handle, payload, {...options, placement: this.placement} as RunOptions<NoInfer<Progress>>);
    }

    async dispose(): Promise<void> {
        this.admission.close(new EngineDisposedError(this.id));
        await this.admission.drain();
        if (!this.pool.closed)
            await this.pool.release(this.tasks.release, this.spec, this.placement);
    }
}
