import { MessageChannel } from "node:worker_threads";
import { Piscina } from "piscina";
import { PoolClosedError } from "./PoolClosedError.js";
import { siblingModuleUrl } from "./siblingModuleUrl.js";
import type { TaskHandle } from "./TaskHandle.js";
import type { WorkerTaskMessage } from "./workerMain.js";

export type WorkerPoolOptions = {
    /** Worker threads; each imports the task modules it is asked for once and keeps them (and their models). */
    workers: number;
};

/**
 * Which workers a task may run on. Tasks with the same `key` (a model) share the same workers, so a
 * model is loaded by `workers` of the pool's threads, not by every one: a 5 GB image pipeline with
 * `workers: 1` is one copy in the process. The workers are chosen when the key is first seen (those
 * holding the fewest keys), and kept until the last engine that `acquire`d the key `release`s it.
 */
export type Placement = {
    key: string;
    workers: number;
};

export type RunOptions<Progress = never> = {
    /**
     * The request's signal. Tasks with the same signal are one request's: they share a cancel flag
     * (set when it aborts, checked by the task between its steps) and one place in the fair rotation.
     */
    signal?: AbortSignal;
    /** Receives the task's `context.progress(...)` messages, in order, before the run settles (none for a task that sends none). */
    onProgress?: [Progress] extends [never] ? never : (message: Progress) => void;
    /** Buffers of the payload to move to the worker instead of copying. */
    transfer?: ArrayBuffer[];
    /** The workers it may run on (default: any). */
    placement?: Placement;
};

type QueuedTask = {
    message: Omit<WorkerTaskMessage, "port">;
    options: RunOptions<unknown>;
    /** The workers it may run on. */
    allowed: readonly number[];
    resolve: (value: unknown) => void;
    reject: (error: unknown) => void;
};

/** One request's tasks: queued ones, how many it has started, how many are running. */
/** `detach`: removes the line's abort listener from its request's signal once the line is done (a signal may outlive many lines). */
type Line = {tasks: QueuedTask[], cancel: Int32Array, started: number, running: number, detach?: () => void};

/** One worker thread: a piscina of one thread, so the pool decides which worker runs each task. */
type Thread = {piscina: Piscina, busy: boolean, keys: number};

/** After an abort, a request's queued tasks are dropped and running ones see the flag. */
const cancelFlags = new WeakMap<AbortSignal, Int32Array>();

/**
 * The one pool of worker threads that runs every ONNX task of every capability (embeddings, speech,
 * images) off the main thread.
 *
 * Fair: each request's tasks wait in their own line, and a free worker takes the next task of the
 * line that has started the fewest (ties: the older line); a task runs only on a worker it may run
 * on (`placement`), and one that must wait for its worker does not hold back other requests' tasks.
 *
 * Crash safety: terminating a worker while ONNX Runtime is inside `session.run()` aborts the whole
 * process. So no task is ever aborted or destroyed: cancellation is cooperative (a shared flag the
 * task checks between steps), and `close()` stops accepting tasks, waits until every queued and
 * running task has settled, and only then terminates the idle workers.
 */
export class WorkerPool {
    private readonly threads: Thread[];
    /** Lines of requests with tasks queued or running, oldest first (a Map keeps insertion order). */
    private readonly lines = new Map<object, Line>();
    /** The workers of each placement key, and how many engines hold it (entries sharing a model folder share its key). */
    private readonly placements = new Map<string, {workers: number[], refs: number}>();
    private running = 0;
    private closing: Promise<void> | null = null;
    private idle: (() => void) | null = null;

    constructor(readonly options: WorkerPoolOptions) {
        const main = siblingModuleUrl(import.meta.url, "./workerMain");
        this.threads = Array.from({length: options.workers}, () => ({
            piscina: new Piscina({
                // Under tsx or vitest the worker first registers the TypeScript loader (workerBootstrap.mjs).
                filename: main.endsWith(".ts") ? new URL("./workerBootstrap.mjs", import.meta.url).href : main,
                workerData: {main},
                minThreads: 1,
                maxThreads: 1,
                // Never reap an idle worker: it holds loaded models.
                idleTimeout: 2_147_483_647,
                concurrentTasksPerWorker: 1,
                // close() runs only once nothing is in flight; never force-terminate a busy worker.
                closeTimeout: 2_147_483_647
            }),
            busy: false,
            keys: 0
        }));
    }

    get size() {
        return this.options.workers;
    }

    get closed() {
        return this.closing != null;
    }

    /** The workers (indices) tasks of `placement` run on; every worker without one. */
    workersOf(placement: Placement | undefined): readonly number[] {
        if (placement == null)
            return this.threads.map((_, index) => index);
        let chosen = this.placements.get(placement.key);
        if (chosen == null) {
            const count = Math.max(1, Math.min(placement.workers, this.threads.length));
            const workers = this.threads.map((thread, index) => ({index, keys: thread.keys}))
                .sort((a, b) => a.keys - b.keys || a.index - b.index)
                .slice(0, count).map(({index}) => index).sort((a, b) => a - b);
            for (const index of workers)
                this.threads[index].keys++;
            chosen = {workers, refs: 0};
            this.placements.set(placement.key, chosen);
        }
        return chosen.workers;
    }

    /** An engine holds `placement` (its model) until it `release`s it; returns its workers. */
    acquire(placement: Placement): readonly number[] {
        const workers = this.workersOf(placement);
        this.placements.get(placement.key)!.refs++;
        return workers;
    }

    /** Runs the task `handle` names (e.g. the speech module's `synthesize`) with `payload` in a worker. */
    run<Payload, Result, Progress>(handle: TaskHandle<Payload, Result, Progress>, payload: NoInfer<Payload>, options: RunOptions<NoInfer<Progress>> = {}): Promise<Result> {
        return this.enqueue(handle, payload, options as RunOptions<unknown>, this.workersOf(options.placement));
    }

    /**
     * Runs the task once on each worker of `placement` (all of them without one), e.g. to load a
     * model on every worker that will serve it, before its first request.
     */
    runOnEach<Payload, Result>(handle: TaskHandle<Payload, Result, never>, payload: NoInfer<Payload>, placement?: Placement): Promise<Result[]> {
        return Promise.all(this.workersOf(placement).map((index) => this.enqueue(handle, payload, {placement}, [index])));
    }

    /**
     * One engine lets go of `placement`. When none holds it any more (or none acquired it), runs the
     * task once on each of its workers (a module's release task, freeing the model there), then
     * forgets which workers the key had.
     */
    async release<Payload>(handle: TaskHandle<Payload, unknown, never>, payload: NoInfer<Payload>, placement: Placement): Promise<void> {
        const held = this.placements.get(placement.key);
        if (held == null || --held.refs > 0)
            return;
        try {
            await this.runOnEach(handle, payload, placement);
        } finally {
            for (const index of held.workers)
                this.threads[index].keys--;
            this.placements.delete(placement.key);
        }
    }

    /** Stop accepting, let every queued and running task finish, then terminate the (idle) workers. */
    close(): Promise<void> {
        return this.closing ??= (async () => {
            if (this.running > 0 || this.lines.size > 0)
                await new Promise<void>((resolve) => this.idle = resolve);
            await Promise.all(this.threads.map((thread) => thread.piscina.close()));
        })();
    }

    private enqueue<Result>(handle: TaskHandle<unknown, Result, unknown>, payload: unknown, options: RunOptions<unknown>, allowed: readonly number[]): Promise<Result> {
        if (this.closing != null)
            return Promise.reject(new PoolClosedError());
        const {signal} = options;
        if (signal?.aborted)
            return Promise.reject(signal.reason);

        const key: object = signal ?? {};
        let line = this.lines.get(key);
        if (line == null) {
            line = {tasks: [], cancel: signal != null ? cancelFlagOf(signal) : new Int32Array(new SharedArrayBuffer(4)), started: 0, running: 0};
            this.lines.set(key, line);
            if (signal != null) {
                // A request that goes away leaves the pool at once: its queued tasks are dropped now, not when their turn comes.
                const onAbort = () => this.dropQueued(key, signal);
                signal.addEventListener("abort", onAbort, {once: true});
                line.detach = () => signal.removeEventListener("abort", onAbort);
            }
        }
        const queue = line;
        return new Promise<Result>((resolve, reject) => {
            queue.tasks.push({
                message: {module: handle.moduleUrl, task: handle.task, payload, cancel: queue.cancel},
                options, allowed, resolve: resolve as (value: unknown) => void, reject
            });
            this.dispatch();
        });
    }

    private dispatch() {
        for (;;) {
            const next = this.nextTask();
            if (next == null)
                break;
            const {key, line, index, thread} = next;
            const task = line.tasks.splice(index, 1)[0];
            const {signal} = task.options;
            if (signal?.aborted) {
                task.reject(signal.reason);
                this.forgetIfDone(key, line);
                continue;
            }
            line.started++;
            line.running++;
            this.running++;
            thread.busy = true;
            this.start(thread, task).then(task.resolve, task.reject).finally(() => {
                thread.busy = false;
                line.running--;
                this.running--;
                this.forgetIfDone(key, line);
                this.dispatch();
                if (this.running === 0 && this.lines.size === 0)
                    this.idle?.();
            });
        }
    }

    /**
     * The next task to start and its worker: among the lines, fewest started first (ties: the older
     * line), the line's first task that has a free worker it may run on, on the lowest such worker.
     */
    private nextTask(): {key: object, line: Line, index: number, thread: Thread} | null {
        if (this.threads.every((thread) => thread.busy))
            return null;
        const lines = [...this.lines].filter(([, line]) => line.tasks.length > 0);
        // A stable sort keeps the older line first on a tie.
        lines.sort(([, a], [, b]) => a.started - b.started);
        for (const [key, line] of lines) {
            for (let index = 0; index < line.tasks.length; index++) {
                const worker = line.tasks[index].allowed.find((candidate) => !this.threads[candidate].busy);
                if (worker != null)
                    return {key, line, index, thread: this.threads[worker]};
            }
        }
        return null;
    }

    private dropQueued(key: object, signal: AbortSignal) {
        const line = this.lines.get(key);
        if (line == null)
            return;
        for (const task of line.tasks.splice(0))
            task.reject(signal.reason);
        this.forgetIfDone(key, line);
        if (this.running === 0 && this.lines.size === 0)
            this.idle?.();
    }

    private forgetIfDone(key: object, line: Line) {
        if (line.tasks.length === 0 && line.running === 0 && this.lines.get(key) === line) {
            this.lines.delete(key);
            line.detach?.();
        }
    }

    private async start(thread: Thread, task: QueuedTask): Promise<unknown> {
        const {signal, onProgress, transfer = []} = task.options;
        if (onProgress == null) {
            // No listener, no channel: creating and transferring a MessagePort per task doubled the cost of a small task.
            try {
                const result = await thread.piscina.run(task.message, {transferList: transfer as never});
                signal?.throwIfAborted();
                return result;
            } catch (error) {
                signal?.throwIfAborted();
                throw error;
            }
        }
        const channel = new MessageChannel();
        // The end marker comes through the same port as the progress, after all of it; the
        // result comes through piscina's own port, so both are awaited.
        const ended = new Promise<void>((resolve) => channel.port1.on("message", (message: {progress?: unknown, end?: true}) => {
            if (message.end === true)
                resolve();
            else if (signal?.aborted !== true)
                onProgress(message.progress);
        }));
        try {
            const result = await thread.piscina.run({...task.message, port: channel.port2}, {transferList: [channel.port2, ...transfer] as never});
            await ended;
            signal?.throwIfAborted();
            return result;
        } catch (error) {
            // A cancelled task may return early or throw TaskCancelledError: either way the caller sees its own abort reason.
            signal?.throwIfAborted();
            throw error;
        } finally {
            channel.port1.close();
        }
    }
}

function cancelFlagOf(signal: AbortSignal) {
    let flag = cancelFlags.get(signal);
    if (flag == null) {
        const created = flag = new Int32Array(new SharedArrayBuffer(4));
        cancelFlags.set(signal, created);
        signal.addEventListener("abort", () => Atomics.store(created, 0, 1), {once: true});
    }
    return flag;
}
