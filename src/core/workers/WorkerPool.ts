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
};

type QueuedTask = {
    message: Omit<WorkerTaskMessage, "port">;
    options: RunOptions<unknown>;
    resolve: (value: unknown) => void;
    reject: (error: unknown) => void;
};

/** One request's tasks: queued ones, how many it has started, how many are running. */
type Line = {tasks: QueuedTask[], cancel: Int32Array, started: number, running: number};

/** After an abort, a request's queued tasks are dropped and running ones see the flag. */
const cancelFlags = new WeakMap<AbortSignal, Int32Array>();

/**
 * The one piscina pool that runs every ONNX task of every capability (embeddings, speech, images)
 * off the main thread.
 *
 * Fair: piscina would run tasks first come, first served, so one request of 2,048 embedding inputs
 * (64 batches) would hold back a one-input request behind all of them. Here each request's tasks
 * wait in their own line, and a free worker takes the next task of the line that has started the
 * fewest (ties: the older line); piscina is never given more tasks than it has workers.
 *
 * Crash safety: terminating a worker while ONNX Runtime is inside `session.run()` aborts the whole
 * process. So no task is ever aborted or destroyed: cancellation is cooperative (a shared flag the
 * task checks between steps), and `close()` stops accepting tasks, waits until every queued and
 * running task has settled, and only then terminates the idle workers.
 */
export class WorkerPool {
    private readonly piscina: Piscina;
    /** Lines of requests with tasks queued or running, oldest first (a Map keeps insertion order). */
    private readonly lines = new Map<object, Line>();
    private running = 0;
    private closing: Promise<void> | null = null;
    private idle: (() => void) | null = null;

    constructor(readonly options: WorkerPoolOptions) {
        const main = siblingModuleUrl(import.meta.url, "./workerMain");
        this.piscina = new Piscina({
            // Under tsx or vitest the worker first registers the TypeScript loader (workerBootstrap.mjs).
            filename: main.endsWith(".ts") ? new URL("./workerBootstrap.mjs", import.meta.url).href : main,
            workerData: {main},
            minThreads: options.workers,
            maxThreads: options.workers,
            // Never reap an idle worker: it holds loaded models.
            idleTimeout: 2_147_483_647,
            concurrentTasksPerWorker: 1,
            // close() runs only once nothing is in flight; never force-terminate a busy worker.
            closeTimeout: 2_147_483_647
        });
    }

    get size() {
        return this.options.workers;
    }

    get closed() {
        return this.closing != null;
    }

    /** Runs the task `handle` names (e.g. the speech module's `synthesize`) with `payload` in a worker. */
    run<Payload, Result, Progress>(handle: TaskHandle<Payload, Result, Progress>, payload: NoInfer<Payload>, options: RunOptions<NoInfer<Progress>> = {}): Promise<Result> {
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
            // A request that goes away leaves the pool at once: its queued tasks are dropped now, not when their turn comes.
            signal?.addEventListener("abort", () => this.dropQueued(key, signal), {once: true});
        }
        const queue = line;
        return new Promise<Result>((resolve, reject) => {
            queue.tasks.push({
                message: {module: handle.moduleUrl, task: handle.task, payload, cancel: queue.cancel},
                options: options as RunOptions<unknown>, resolve: resolve as (value: unknown) => void, reject
            });
            this.dispatch();
        });
    }

    /** Stop accepting, let every queued and running task finish, then terminate the (idle) workers. */
    close(): Promise<void> {
        return this.closing ??= (async () => {
            if (this.running > 0 || this.lines.size > 0)
                await new Promise<void>((resolve) => this.idle = resolve);
            await this.piscina.close();
        })();
    }

    private dispatch() {
        while (this.running < this.options.workers) {
            const next = this.nextLine();
            if (next == null)
                break;
            const [key, line] = next;
            const task = line.tasks.shift()!;
            const {signal} = task.options;
            if (signal?.aborted) {
                task.reject(signal.reason);
                this.forgetIfDone(key, line);
                continue;
            }
            line.started++;
            line.running++;
            this.running++;
            this.start(task).then(task.resolve, task.reject).finally(() => {
                line.running--;
                this.running--;
                this.forgetIfDone(key, line);
                this.dispatch();
                if (this.running === 0 && this.lines.size === 0)
                    this.idle?.();
            });
        }
    }

    /** The line with queued tasks that has started the fewest so far; the older one on a tie. */
    private nextLine(): [object, Line] | null {
        let best: [object, Line] | null = null;
        for (const entry of this.lines)
            if (entry[1].tasks.length > 0 && (best == null || entry[1].started < best[1].started))
                best = entry;
        return best;
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
        if (line.tasks.length === 0 && line.running === 0 && this.lines.get(key) === line)
            this.lines.delete(key);
    }

    private async start(task: QueuedTask): Promise<unknown> {
        const {signal, onProgress, transfer = []} = task.options;
        if (onProgress == null) {
            // No listener, no channel: creating and transferring a MessagePort per task doubled the cost of a small task.
            try {
                const result = await this.piscina.run(task.message, {transferList: transfer as never});
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
            else if (onProgress != null && signal?.aborted !== true)
                onProgress(message.progress);
        }));
        try {
            const result = await this.piscina.run({...task.message, port: channel.port2}, {transferList: [channel.port2, ...transfer] as never});
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
