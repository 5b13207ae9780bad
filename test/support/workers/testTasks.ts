/**
 * A task module for the worker pool's own tests: tasks that report progress, block until the test
 * releases them, or run until cancelled, so every state is reached deterministically.
 */
import { threadId } from "node:worker_threads";
import type { TaskContext, TaskModule } from "../../../src/core/workers/WorkerTask.js";
import { transferable } from "../../../src/core/workers/transferable.js";

/** Waits until `gate[0]` is non-zero (or the task is cancelled); polls so cancellation is seen too. */
async function waitForGate(gate: Int32Array, context: TaskContext) {
    while (Atomics.load(gate, 0) === 0 && !context.cancelled)
        await Atomics.waitAsync(gate, 0, 0, 5).value;
}

export const tasks = {
    echo: (payload: unknown) => payload,
    /** The worker thread's id, and what the payload says (to tell runs apart). */
    whoami: (payload: string) => ({threadId, payload}),
    fail: (payload: {message: string}) => {
        throw new Error(payload.message);
    },
    /** Reports `count` steps, then returns how many it reported. */
    steps: (payload: {count: number}, context: TaskContext<{step: number}>) => {
        for (let step = 0; step < payload.count; step++)
            context.progress({step});
        return payload.count;
    },
    /** Says it started, then waits for the gate; returns whether it saw the cancel flag. */
    gated: async (payload: {gate: Int32Array, id: string}, context: TaskContext<{started: string}>) => {
        context.progress({started: payload.id});
        await waitForGate(payload.gate, context);
        context.throwIfCancelled();
        return payload.id;
    },
    /** Returns a buffer by moving it. */
    bytes: (payload: {length: number}) => {
        const data = new Uint8Array(payload.length).fill(7);
        return transferable({data}, [data.buffer]);
    }
} satisfies TaskModule;
