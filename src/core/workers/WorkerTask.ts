/**
 * The contract between the shared worker pool and the task functions capabilities run in it.
 *
 * A capability keeps its worker code in a task module: a file whose `tasks` export maps task names
 * to functions, e.g. `export const tasks = {synthesize, describe} satisfies TaskModule;`. Each worker
 * thread imports a module the first time one of its tasks runs there and keeps it (and whatever models
 * it loaded) for the life of the pool. The main thread never imports a task module: it names a task
 * by a typed handle (`TaskHandle`, made with `taskModule`), whose types come from the module's own
 * function signatures (`import type`), so payload, result and progress are checked on both sides.
 */

/** What a task function gets besides its payload; `Progress` is the type of the messages it sends. */
export type TaskContext<Progress = never> = {
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
    progress(message: Progress, transfer?: ArrayBuffer[]): void;
};

export type TaskFunction<Payload, Result, Progress = never> = (payload: Payload, context: TaskContext<Progress>) => Promise<Result> | Result;

/** A task module's `tasks` export: any task function (the handles recover each one's exact types). */
export type TaskModule = Record<string, TaskFunction<never, unknown, never>>;
