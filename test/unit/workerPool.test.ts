import { getEventListeners } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { PoolClosedError } from "../../src/core/workers/PoolClosedError.js";
import { taskModule, type TaskHandle } from "../../src/core/workers/TaskHandle.js";
import { WorkerPool } from "../../src/core/workers/WorkerPool.js";
import type { tasks } from "../support/workers/testTasks.js";

const testTasks = new URL("../support/workers/testTasks.ts", import.meta.url).href;
const test = taskModule<typeof tasks>(testTasks);
const pools: WorkerPool[] = [];

function pool(workers: number) {
    const created = new WorkerPool({workers});
    pools.push(created);
    return created;
}

function gate() {
    return new Int32Array(new SharedArrayBuffer(4));
}

function open(flag: Int32Array) {
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
}

afterEach(async () => {
    await Promise.all(pools.splice(0).map((created) => created.close()));
});

describe("WorkerPool", () => {
    it("runs a registered module's task and returns its result", async () => {
        expect(await pool(1).run(test.task("echo"), {hello: "world"})).toEqual({hello: "world"});
    });

    it("rejects unknown modules and tasks, and passes a task's error on", async () => {
        const workers = pool(1);
        const missingModule: TaskHandle<null, unknown, never> = {moduleUrl: new URL("../support/workers/noSuchTasks.ts", import.meta.url).href, task: "echo"};
        await expect(workers.run(missingModule, null)).rejects.toThrow("noSuchTasks");
        const missingTask: TaskHandle<null, unknown, never> = {moduleUrl: testTasks, task: "nope"};
        await expect(workers.run(missingTask, null)).rejects.toThrow("has no task 'nope'");
        await expect(workers.run(test.task("fail"), {message: "bad input"})).rejects.toThrow("bad input");
    });

    it("delivers every progress message, in order, before the result", async () => {
        const seen: unknown[] = [];
        const result = await pool(1).run(test.task("steps"), {count: 50}, {onProgress: (message) => seen.push(message)});
        expect(result).toBe(50);
        expect(seen).toEqual(Array.from({length: 50}, (_, step) => ({step})));
    });

    it("moves a transferable result", async () => {
        const {data} = await pool(1).run(test.task("bytes"), {length: 1000});
        expect(data.length).toBe(1000);
        expect(data.every((value) => value === 7)).toBe(true);
    });

    it("lets requests take turns: a one-task request is not queued behind all of a big request's tasks", async () => {
        const workers = pool(1);
        const big = new AbortController();
        const small = new AbortController();
        const finished: string[] = [];
        const first = gate();
        const runs = [workers.run(test.task("gated"), {gate: first, id: "big-0"}, {signal: big.signal}).then((id) => finished.push(id as string))];
        for (let index = 1; index < 6; index++)
            runs.push(workers.run(test.task("echo"), `big-${index}`, {signal: big.signal}).then((id) => finished.push(id as string)));
        runs.push(workers.run(test.task("echo"), "small", {signal: small.signal}).then((id) => finished.push(id as string)));
        open(first);
        await Promise.all(runs);
        // One worker: tasks finish in the order they were dispatched.
        expect(finished).toEqual(["big-0", "small", "big-1", "big-2", "big-3", "big-4", "big-5"]);
    });

    it("cancels cooperatively: the running task sees the flag, queued ones never start, the worker is free again", async () => {
        const workers = pool(1);
        const controller = new AbortController();
        const reason = new Error("client went away");
        const blocked = gate();
        let started!: () => void;
        const startedPromise = new Promise<void>((resolve) => started = resolve);
        const running = workers.run(test.task("gated"), {gate: blocked, id: "a"}, {signal: controller.signal, onProgress: () => started()});
        const queued = workers.run(test.task("echo"), "never", {signal: controller.signal});
        await startedPromise;
        controller.abort(reason);
        // Both settle on the abort (the queued one at once): watch them together so neither goes unhandled.
        await Promise.all([expect(running).rejects.toBe(reason), expect(queued).rejects.toBe(reason)]);
        expect(await workers.run(test.task("echo"), "after")).toBe("after");
    });

    it("drops a cancelled request's queued tasks at once, while another request holds every worker", async () => {
        const workers = pool(1);
        const blocked = gate();
        let started!: () => void;
        const startedPromise = new Promise<void>((resolve) => started = resolve);
        const holder = workers.run(test.task("gated"), {gate: blocked, id: "holder"}, {onProgress: () => started()});
        await startedPromise;
        const controller = new AbortController();
        const reason = new Error("client went away");
        const queued = [1, 2, 3].map((index) => workers.run(test.task("echo"), index, {signal: controller.signal}));
        controller.abort(reason);
        // Rejected before the worker is free: the request does not wait for a turn it will not use.
        await Promise.all(queued.map((task) => expect(task).rejects.toBe(reason)));
        open(blocked);
        expect(await holder).toBe("holder");
        expect(await workers.run(test.task("echo"), "after")).toBe("after");
    });

    it("a signal that outlives many requests' tasks keeps no listener of the pool once they are done", async () => {
        const workers = pool(1);
        const signal = new AbortController().signal;
        for (let round = 0; round < 12; round++) {
            expect(await workers.run(test.task("echo"), round, {signal})).toBe(round);
            // A task's bookkeeping ends just after its result is handed over: each round is a request of its own.
            await new Promise((resolve) => setImmediate(resolve));
        }
        // One listener per signal remains (the cancel flag the workers read), not one per request's tasks.
        expect(getEventListeners(signal, "abort")).toHaveLength(1);
    });

    it("close() waits for running tasks, then refuses new ones", async () => {
        const workers = pool(1);
        const blocked = gate();
        let started!: () => void;
        const startedPromise = new Promise<void>((resolve) => started = resolve);
        const running = workers.run(test.task("gated"), {gate: blocked, id: "slow"}, {onProgress: () => started()});
        await startedPromise;
        let closed = false;
        const closing = workers.close().then(() => closed = true);
        await expect(workers.run(test.task("echo"), 1)).rejects.toBeInstanceOf(PoolClosedError);
        for (let turn = 0; turn < 5; turn++)
            await new Promise((resolve) => setImmediate(resolve));
        expect(closed).toBe(false);
        open(blocked);
        expect(await running).toBe("slow");
        await closing;
        expect(closed).toBe(true);
    });

    describe("placement: a model's tasks run on the workers chosen for it", () => {
        it("keeps a key's tasks on its workers, and spreads keys over the least used workers", async () => {
            const workers = pool(3);
            const big = {key: "image-model", workers: 1};
            const small = {key: "speech-model", workers: 2};
            const bigThreads = new Set((await Promise.all(Array.from({length: 6}, (_, index) => workers.run(test.task("whoami"), `b${index}`, {placement: big})))).map((run) => run.threadId));
            expect(bigThreads.size).toBe(1);
            expect(workers.workersOf(big)).toEqual([0]);
            expect(workers.workersOf(small)).toEqual([1, 2]);
            const smallThreads = new Set((await workers.runOnEach(test.task("whoami"), "load", small)).map((run) => run.threadId));
            expect(smallThreads.size).toBe(2);
            expect([...smallThreads].some((id) => bigThreads.has(id))).toBe(false);
        });

        it("runOnEach runs once on every worker", async () => {
            const workers = pool(2);
            const runs = await workers.runOnEach(test.task("whoami"), "each");
            expect(new Set(runs.map((run) => run.threadId)).size).toBe(2);
        });

        it("a task waiting for its own busy worker does not hold back another request's task", async () => {
            const workers = pool(2);
            const pinned = {key: "pinned", workers: 1};
            const blocked = gate();
            let started!: () => void;
            const startedPromise = new Promise<void>((resolve) => started = resolve);
            const holder = workers.run(test.task("gated"), {gate: blocked, id: "holder"}, {placement: pinned, onProgress: () => started()});
            await startedPromise;
            const waiting = workers.run(test.task("echo"), "pinned-second", {placement: pinned});
            // Another request, placed anywhere: the free worker takes it while the pinned one waits.
            expect(await workers.run(test.task("echo"), "free")).toBe("free");
            open(blocked);
            expect(await holder).toBe("holder");
            expect(await waiting).toBe("pinned-second");
        });

        it("release runs the task on the key's workers and frees its place", async () => {
            const workers = pool(2);
            const first = {key: "first", workers: 1};
            expect(workers.workersOf(first)).toEqual([0]);
            expect(workers.workersOf({key: "second", workers: 1})).toEqual([1]);
            const released = await workers.runOnEach(test.task("whoami"), "before", first);
            await workers.release(test.task("whoami"), "release", first);
            // Worker 0 holds nothing now: the next new key goes there.
            expect(workers.workersOf({key: "third", workers: 1})).toEqual([0]);
            expect(released).toHaveLength(1);
        });
    });
});

