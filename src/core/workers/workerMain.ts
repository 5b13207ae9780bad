import type { MessagePort } from "node:worker_threads";
import { TaskCancelledError } from "./TaskCancelledError.js";
import type { TaskContext } from "./WorkerTask.js";

/** What the pool sends a worker for one task. */
export type WorkerTaskMessage = {
    /** File URL of the capability's task module. */
    module: string;
    task: string;
    payload: unknown;
    /** Shared flag, 1 once the request is cancelled. */
    cancel: Int32Array;
    /** Progress messages go here, then `{end: true}`; absent when the caller listens to no progress (a channel per task costs). */
    port?: MessagePort;
};

/**
 * A task as the worker calls it. The message crossed a thread as plain data, so its types are gone
 * here; they were checked where it was sent, against the same module's signatures (TaskHandle).
 */
type UntypedTask = (payload: unknown, context: TaskContext<unknown>) => unknown;

const modules = new Map<string, Promise<Readonly<Record<string, UntypedTask>>>>();

function taskModule(url: string): Promise<Readonly<Record<string, UntypedTask>>> {
    let loaded = modules.get(url);
    if (loaded == null) {
        loaded = import(url).catch((error: unknown) => {
            throw new Error(`Worker task module ${url} could not be loaded: ${(error as Error)?.message ?? String(error)}`);
        }).then((module: {tasks?: Record<string, UntypedTask>}) => {
            if (module.tasks == null)
                throw new Error(`Worker task module ${url} has no 'tasks' export`);
            return module.tasks;
        });
        modules.set(url, loaded);
    }
    return loaded;
}

/** Runs inside a piscina worker thread: one task of a capability's task module. */
export default async function runWorkerTask({module, task, payload, cancel, port}: WorkerTaskMessage): Promise<unknown> {
    const context: TaskContext<unknown> = {
        get cancelled() {
            return Atomics.load(cancel, 0) !== 0;
        },
        throwIfCancelled() {
            if (Atomics.load(cancel, 0) !== 0)
                throw new TaskCancelledError();
        },
        progress(message, transfer = []) {
            port?.postMessage({progress: message}, transfer);
        }
    };
    try {
        const run = (await taskModule(module))[task];
        if (run == null)
            throw new Error(`Worker task module ${module} has no task '${task}'`);
        return await run(payload, context);
    } finally {
        port?.postMessage({end: true});
        port?.close();
    }
}
