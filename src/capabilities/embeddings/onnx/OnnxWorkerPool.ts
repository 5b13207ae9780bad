import { Piscina } from "piscina";
import type { DescribeResult, DescribeTask, EmbedTask, EmbedTaskResult, TokenizeResult, TokenizeTask } from "./workerProtocol.js";

export type OnnxWorkerPoolOptions = {
    /** Worker threads; each loads the models it is asked for once and keeps them. */
    workers: number;
};

export class PoolClosedError extends Error {
    constructor() {
        super("The embeddings worker pool is shutting down.");
        this.name = "PoolClosedError";
    }
}

const workerEntry = new URL("./embeddingWorker.mjs", import.meta.url).href;

/**
 * The one piscina pool that runs transformers.js (ONNX Runtime) off the main thread, shared by
 * every ONNX model of the server.
 *
 * Crash safety: terminating a worker while ONNX Runtime is inside `session.run()` aborts the whole
 * process (Napi::Error, exit 134). So no task is ever aborted or destroyed: cancellation is
 * cooperative (a shared flag the worker checks before each batch, see EmbedTask), and `close()`
 * stops accepting tasks, waits until every task has settled, and only then terminates the idle workers.
 */
export class OnnxWorkerPool {
    private readonly piscina: Piscina;
    private readonly inFlight = new Set<Promise<unknown>>();
    private closing: Promise<void> | null = null;
    private references = 0;

    constructor(readonly options: OnnxWorkerPoolOptions) {
        this.piscina = new Piscina({
            filename: workerEntry,
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

    /** Tasks queued or running. */
    get pending() {
        return this.inFlight.size;
    }

    describe(task: DescribeTask) {
        return this.run<DescribeResult>(task);
    }

    tokenize(task: TokenizeTask) {
        return this.run<TokenizeResult>(task);
    }

    embed(task: EmbedTask) {
        return this.run<EmbedTaskResult>(task);
    }

    private run<T>(task: DescribeTask | TokenizeTask | EmbedTask): Promise<T> {
        if (this.closing != null)
            return Promise.reject(new PoolClosedError());
        const promise = this.piscina.run(task) as Promise<T>;
        this.inFlight.add(promise);
        const forget = () => this.inFlight.delete(promise);
        promise.then(forget, forget);
        return promise;
    }

    /** Counted users (engines); the pool closes when the last one releases it. */
    retain() {
        this.references++;
        return this;
    }

    release(): Promise<void> {
        this.references = Math.max(0, this.references - 1);
        return this.references === 0 ? this.close() : Promise.resolve();
    }

    /** Stop accepting, wait for every queued and running task, then terminate the (idle) workers. */
    close(): Promise<void> {
        return this.closing ??= (async () => {
            while (this.inFlight.size > 0)
                await Promise.allSettled([...this.inFlight]);
            await this.piscina.close();
        })();
    }
}
