/**
 * The contract between the shared worker pool and the task functions capabilities run in it.
 *
 * A capability keeps its worker code in a task module: a file whose `tasks` export maps task names
 * to functions, e.g. `export const tasks = {synthesize, describe} satisfies TaskModule;`. Each worker
 * thread imports a module the first time one of its tasks runs there and keeps it (and whatever models
 * it loaded) for the life of the pool.
 */

/** What a task function gets besides its payload. */
export type TaskContext = {
    /**
     * Whether the request that started the task was cancelled (client gone, server shutting down).
     * A worker is never terminated while ONNX Runtime runs (that aborts the whole process), so a long
     * task checks this between steps (sentences, denoising steps, batches) and returns early.
     */
    readonly cancelled: boolean;
    /** Throws a `TaskCancelledError` when cancelled; the pool then rejects the run with the request's abort reason. */
    throwIfCancelled(): void;
    /**
     * Sends a message to the main thread while the task runs (a finished sentence, a step, a preview
     * image); the run's `onProgress` receives it in order, before the task's result. Buffers listed in
     * `transfer` are moved, not copied (the worker must not use them afterwards).
     */
    progress(message: unknown, transfer?: ArrayBuffer[]): void;
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type TaskFunction<Payload = any, Result = any> = (payload: Payload, context: TaskContext) => Promise<Result> | Result;

export type TaskModule = Record<string, TaskFunction>;
