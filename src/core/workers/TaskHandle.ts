import type { TaskContext, TaskModule } from "./WorkerTask.js";

/**
 * One task of a task module, as the main thread names it: where the module is (a file URL) and the
 * task's name, with its payload, result and progress types attached (type-only: `types` is never set).
 * `WorkerPool.run(handle, payload, {onProgress})` is checked against them.
 */
export type TaskHandle<Payload, Result, Progress> = {
    readonly moduleUrl: string;
    readonly task: string;
    readonly types?: {payload: Payload, result: Result, progress: Progress};
};

type PayloadOf<F> = F extends (payload: infer P, ...rest: never[]) => unknown ? P : never;
type ResultOf<F> = F extends (...args: never[]) => infer R ? Awaited<R> : never;
/** The type a task sends through `context.progress`; never for a task that takes no context. */
type ProgressOf<F> = F extends (payload: never) => unknown ? never
    : F extends (payload: never, context: TaskContext<infer G>) => unknown ? G : never;

export type HandleOf<F> = TaskHandle<PayloadOf<F>, ResultOf<F>, ProgressOf<F>>;

/**
 * The handles of a task module's tasks. `Tasks` is the module's `tasks` export as a type only
 * (`typeof import("./speechTasks.js").tasks` through `import type`), so the main thread does not load
 * the module (nor ONNX Runtime with it); `moduleUrl` is its file URL (`siblingModuleUrl`).
 */
export function taskModule<Tasks extends TaskModule>(moduleUrl: string): {task<Name extends keyof Tasks & string>(name: Name): HandleOf<Tasks[Name]>} {
    return {task: (name) => ({moduleUrl, task: name})};
}
