/** The gate capability's worker task module: holds a worker until the gate moves on (or the request is cancelled). */
import type { TaskContext, TaskModule } from "../../../src/core/workers/WorkerTask.js";

export const tasks = {
    hold: async (payload: {gate: Int32Array, since: number}, context: TaskContext<{held: boolean}>) => {
        context.progress({held: true});
        while (Atomics.load(payload.gate, 0) === payload.since && !context.cancelled)
            await Atomics.waitAsync(payload.gate, 0, payload.since, 5).value;
        context.throwIfCancelled();
        return {released: true};
    }
} satisfies TaskModule;
