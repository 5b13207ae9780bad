import { describe, expect, it } from "vitest";
import { QueueFullError } from "../../src/core/engines/QueueFullError.js";
import { AdmissionQueue, type AdmissionLease } from "../../src/core/admission/AdmissionQueue.js";

const never = () => new AbortController().signal;

/** Lets every already-resolved promise callback run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Tracks whether a lease promise has resolved yet, and with what. */
function track<T>(promise: Promise<AdmissionLease<T>>) {
    const state: {lease: AdmissionLease<T> | null, error: unknown} = {lease: null, error: null};
    promise.then((lease) => { state.lease = lease; }, (error: unknown) => { state.error = error; });
    return state;
}

describe("AdmissionQueue", () => {
    it("leases free slots immediately and reports the numbers", async () => {
        const pool = new AdmissionQueue(["a", "b", "c"], 4, "m");
        expect(pool.capacity).toBe(3);
        expect(pool.load().parallel - pool.load().busy).toBe(3);
        expect(pool.load().waiting).toBe(0);

        const lease = await pool.acquire(2, never());
        expect(lease.slots).toEqual(["a", "b"]);
        expect(pool.load().parallel - pool.load().busy).toBe(1);
        expect(pool.capacity).toBe(3);

        lease.release();
        expect(pool.load().parallel - pool.load().busy).toBe(3);
    });

    it("serves waiters first come, first served", async () => {
        const pool = new AdmissionQueue(["s"], 10, "m");
        const first = await pool.acquire(1, never());
        const order: string[] = [];
        const second = pool.acquire(1, never()).then((lease) => { order.push("second"); return lease; });
        const third = pool.acquire(1, never()).then((lease) => { order.push("third"); return lease; });
        expect(pool.load().waiting).toBe(2);

        first.release();
        (await second).release();
        (await third).release();
        expect(order).toEqual(["second", "third"]);
        expect(pool.load().waiting).toBe(0);
        expect(pool.load().parallel - pool.load().busy).toBe(1);
    });

    it("hands a released slot to the waiter, not to a newcomer", async () => {
        const pool = new AdmissionQueue(["s"], 10, "m");
        const first = await pool.acquire(1, never());
        const waiter = track(pool.acquire(1, never()));
        first.release();
        await settle();
        expect(waiter.lease?.slots).toEqual(["s"]);
        expect(pool.load().parallel - pool.load().busy).toBe(0);
    });

    it("throws QueueFullError synchronously when the waiting line is full", async () => {
        const pool = new AdmissionQueue(["s"], 2, "my-model");
        await pool.acquire(1, never());
        void pool.acquire(1, never());
        void pool.acquire(1, never());
        expect(pool.load().waiting).toBe(2);

        let thrown: unknown;
        try {
            // Not awaited: the error must come from the call itself, not from a rejected promise.
            void pool.acquire(1, never());
        } catch (error) {
            thrown = error;
        }
        expect(thrown).toBeInstanceOf(QueueFullError);
        expect((thrown as QueueFullError).modelId).toBe("my-model");
        expect((thrown as QueueFullError).queueSize).toBe(2);
        expect(pool.load().waiting).toBe(2);
    });

    it("with maxWaiting 0 a busy pool refuses at once, a free one still leases", async () => {
        const pool = new AdmissionQueue(["s"], 0, "m");
        const lease = await pool.acquire(1, never());
        expect(() => pool.acquire(1, never())).toThrow(QueueFullError);
        lease.release();
        await expect(pool.acquire(1, never())).resolves.toMatchObject({slots: ["s"]});
    });

    it("a request for 2 slots is not overtaken by later single-slot requests", async () => {
        const pool = new AdmissionQueue(["a", "b"], 10, "m");
        const one = await pool.acquire(1, never());
        const two = track(pool.acquire(2, never()));
        // One slot is free, but the pair request is ahead in line.
        const single = track(pool.acquire(1, never()));
        await settle();
        expect(two.lease).toBeNull();
        expect(single.lease).toBeNull();
        expect(pool.load().parallel - pool.load().busy).toBe(1);
        expect(pool.load().waiting).toBe(2);

        one.release();
        await settle();
        expect([...two.lease!.slots].sort()).toEqual(["a", "b"]);
        expect(single.lease).toBeNull();

        two.lease!.release();
        await settle();
        expect(single.lease!.slots).toHaveLength(1);
        expect(pool.load().waiting).toBe(0);
    });

    it("several single-slot waiters are served together when a multi-slot lease is released", async () => {
        const pool = new AdmissionQueue(["a", "b"], 10, "m");
        const pair = await pool.acquire(2, never());
        const x = track(pool.acquire(1, never()));
        const y = track(pool.acquire(1, never()));
        pair.release();
        await settle();
        expect(x.lease).not.toBeNull();
        expect(y.lease).not.toBeNull();
        expect(pool.load().parallel - pool.load().busy).toBe(0);
    });

    it("rejects count 0 and counts above capacity", () => {
        const pool = new AdmissionQueue(["a", "b"], 10, "m");
        expect(() => pool.acquire(0, never())).toThrow(RangeError);
        expect(() => pool.acquire(3, never())).toThrow(RangeError);
    });

    it("aborting a waiting request removes it from the line and rejects with the abort reason", async () => {
        const pool = new AdmissionQueue(["s"], 10, "m");
        const held = await pool.acquire(1, never());
        const controller = new AbortController();
        const aborted = pool.acquire(1, controller.signal);
        const after = track(pool.acquire(1, never()));
        expect(pool.load().waiting).toBe(2);

        const reason = new Error("client went away");
        controller.abort(reason);
        await expect(aborted).rejects.toBe(reason);
        expect(pool.load().waiting).toBe(1);

        held.release();
        await settle();
        expect(after.lease?.slots).toEqual(["s"]);
    });

    it("aborting a multi-slot waiter at the head lets the single-slot waiters behind it in", async () => {
        const pool = new AdmissionQueue(["a", "b"], 10, "m");
        await pool.acquire(1, never());
        const controller = new AbortController();
        const pair = pool.acquire(2, controller.signal);
        const single = track(pool.acquire(1, never()));
        await settle();
        expect(single.lease).toBeNull();

        controller.abort(new Error("gone"));
        await expect(pair).rejects.toThrow("gone");
        await settle();
        expect(single.lease).not.toBeNull();
        expect(pool.load().waiting).toBe(0);
    });

    it("aborting after the lease was granted does nothing to the pool", async () => {
        const pool = new AdmissionQueue(["s"], 10, "m");
        const held = await pool.acquire(1, never());
        const controller = new AbortController();
        const waiting = pool.acquire(1, controller.signal);
        held.release();
        const lease = await waiting;
        controller.abort(new Error("late"));
        expect(pool.load().parallel - pool.load().busy).toBe(0);
        expect(pool.load().waiting).toBe(0);
        lease.release();
        expect(pool.load().parallel - pool.load().busy).toBe(1);
    });

    it("throws synchronously when the signal is already aborted", () => {
        const pool = new AdmissionQueue(["s"], 10, "m");
        const controller = new AbortController();
        const reason = new Error("already gone");
        controller.abort(reason);
        expect(() => pool.acquire(1, controller.signal)).toThrow(reason);
        expect(pool.load().parallel - pool.load().busy).toBe(1);
        expect(pool.load().waiting).toBe(0);
    });

    it("releasing a lease twice returns its slots only once", async () => {
        const pool = new AdmissionQueue(["a", "b"], 10, "m");
        const lease = await pool.acquire(1, never());
        const other = await pool.acquire(1, never());
        lease.release();
        lease.release();
        expect(pool.load().parallel - pool.load().busy).toBe(1);
        other.release();
        expect(pool.load().parallel - pool.load().busy).toBe(2);

        // A second release of an old lease must not hand a slot to a waiter.
        const again = await pool.acquire(2, never());
        const waiter = track(pool.acquire(1, never()));
        lease.release();
        await settle();
        expect(waiter.lease).toBeNull();
        expect(pool.load().parallel - pool.load().busy).toBe(0);
        again.release();
    });

    it("close() rejects everyone waiting and every later acquire; leases out stay valid", async () => {
        const pool = new AdmissionQueue(["s"], 10, "m");
        const held = await pool.acquire(1, never());
        const w1 = pool.acquire(1, never());
        const w2 = pool.acquire(1, never());
        const closed = new Error("shutting down");

        pool.close(closed);
        await expect(w1).rejects.toBe(closed);
        await expect(w2).rejects.toBe(closed);
        expect(pool.load().waiting).toBe(0);
        expect(() => pool.acquire(1, never())).toThrow(closed);

        held.release();
        expect(pool.load().parallel - pool.load().busy).toBe(1);
        // Even with a free slot the pool stays closed.
        expect(() => pool.acquire(1, never())).toThrow(closed);
    });

    it("aborting a waiter after close() does not disturb anything", async () => {
        const pool = new AdmissionQueue(["s"], 10, "m");
        await pool.acquire(1, never());
        const controller = new AbortController();
        const waiting = pool.acquire(1, controller.signal);
        const closed = new Error("closed");
        pool.close(closed);
        controller.abort(new Error("late abort"));
        await expect(waiting).rejects.toBe(closed);
        expect(pool.load().waiting).toBe(0);
    });

    it("drain() resolves only once every lease is back and nobody waits", async () => {
        const pool = new AdmissionQueue(2, 10, "m");
        const first = await pool.acquire(1, never());
        const second = await pool.acquire(1, never());
        const third = pool.acquire(1, never());
        let drained = false;
        const drain = pool.drain().then(() => drained = true);
        first.release();
        (await third).release();
        await Promise.resolve();
        expect(drained).toBe(false);
        second.release();
        await drain;
        expect(drained).toBe(true);
        expect(pool.load()).toEqual({parallel: 2, busy: 0, waiting: 0});
    });

    it("run() releases its slots whether the work succeeds or throws", async () => {
        const pool = new AdmissionQueue(1, 0, "m");
        await expect(pool.run(1, never(), async () => { throw new Error("boom"); })).rejects.toThrow("boom");
        expect(await pool.run(1, never(), async (slots) => slots.length)).toBe(1);
        expect(pool.load().busy).toBe(0);
    });
});
