import { FakeChatEngine } from "./FakeChatEngine.js";

/**
 * A FakeChatEngine whose jobs write "first" at once, then wait for the test to `release()` them
 * before " second": a deterministic generation in progress (a busy sequence), without any timer.
 * `started(count)` resolves once `count` jobs have written their first piece.
 */
export function gatedFakeChatEngine(id: string) {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => release = resolve);
    let startedJobs = 0;
    const waiters: {count: number, resolve: () => void}[] = [];
    const engine = new FakeChatEngine(id, {
        pieces: ["first", " second"],
        beforePiece: async (index) => {
            if (index === 0)
                return new Promise((resolve) => setImmediate(resolve));
            startedJobs++;
            for (const waiter of waiters.filter((candidate) => candidate.count <= startedJobs))
                waiter.resolve();
            await gate;
        }
    });
    const started = (count = 1) => new Promise<void>((resolve) => count <= startedJobs ? resolve() : waiters.push({count, resolve}));
    return {engine, release, started};
}
