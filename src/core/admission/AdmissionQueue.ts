import { QueueFullError } from "../engines/QueueFullError.js";
import type { EngineLoad } from "../engines/EngineLoad.js";

export type AdmissionLease<T> = {
    readonly slots: readonly T[];
    release(): void;
};

type Waiter<T> = {
    count: number;
    resolve: (lease: AdmissionLease<T>) => void;
    reject: (error: unknown) => void;
    signal: AbortSignal;
    onAbort: () => void;
};

/**
 * The one admission control every engine uses: a fixed set of slots (context sequences, or plain
 * places for requests served at once) handed out first come, first served, with a bounded waiting
 * line. `acquire` throws `QueueFullError` synchronously when the line is full, so the handler can
 * answer 503 before it has sent anything. A request for several slots (n > 1) gets them all at once
 * and nobody behind it jumps ahead, so it cannot starve.
 *
 * Leases are the in-flight requests: `load()` reports them for /health and `drain()` waits for them,
 * so an engine closes its queue, drains, and only then frees its model.
 */
export class AdmissionQueue<T = number> {
    private readonly free: T[];
    private readonly waiting: Waiter<T>[] = [];
    private closedError: Error | null = null;
    private leased = 0;
    private idleWaiters: (() => void)[] = [];
    readonly capacity: number;

    /** `slots`: the resources handed out, or a count of anonymous places. */
    constructor(slots: readonly T[] | number, private readonly maxWaiting: number, private readonly name: string) {
        this.free = typeof slots === "number" ? Array.from({length: slots}, (_, index) => index as T) : [...slots];
        this.capacity = this.free.length;
    }

    load(): EngineLoad {
        return {parallel: this.capacity, busy: this.capacity - this.free.length, waiting: this.waiting.length};
    }

    acquire(count: number, signal: AbortSignal): Promise<AdmissionLease<T>> {
        if (this.closedError != null)
            throw this.closedError;
        if (count < 1 || count > this.capacity)
            throw new RangeError(`Cannot acquire ${count} of ${this.capacity} slots`);
        signal.throwIfAborted();

        if (this.waiting.length === 0 && this.free.length >= count)
            return Promise.resolve(this.lease(count));
        if (this.waiting.length >= this.maxWaiting)
            throw new QueueFullError(this.name, this.maxWaiting);

        return new Promise<AdmissionLease<T>>((resolve, reject) => {
            const waiter: Waiter<T> = {
                count, resolve, reject, signal,
                onAbort: () => {
                    this.waiting.splice(this.waiting.indexOf(waiter), 1);
                    reject(signal.reason);
                    this.dispatch();
                }
            };
            signal.addEventListener("abort", waiter.onAbort, {once: true});
            this.waiting.push(waiter);
        });
    }

    /** Runs `work` with `count` slots, releasing them however it ends. Throws synchronously like `acquire`. */
    run<R>(count: number, signal: AbortSignal, work: (slots: readonly T[]) => Promise<R>): Promise<R> {
        const lease = this.acquire(count, signal);
        return lease.then(async ({slots, release}) => {
            try {
                return await work(slots);
            } finally {
                release();
            }
        });
    }

    /** Rejects everyone waiting and every later acquire; leases already out stay valid. */
    close(error: Error) {
        this.closedError ??= error;
        for (const waiter of this.waiting.splice(0)) {
            waiter.signal.removeEventListener("abort", waiter.onAbort);
            waiter.reject(error);
        }
        this.notifyIdle();
    }

    /** Resolves once no lease is out and nobody waits (call after `close` to wait for in-flight work). */
    drain(): Promise<void> {
        if (this.leased === 0 && this.waiting.length === 0)
            return Promise.resolve();
        return new Promise((resolve) => this.idleWaiters.push(resolve));
    }

    private lease(count: number): AdmissionLease<T> {
        const slots = this.free.splice(0, count);
        this.leased++;
        let released = false;
        return {
            slots,
            release: () => {
                if (released)
                    return;
                released = true;
                this.leased--;
                this.free.push(...slots);
                this.dispatch();
                this.notifyIdle();
            }
        };
    }

    private dispatch() {
        while (this.waiting.length > 0 && this.free.length >= this.waiting[0].count) {
            const waiter = this.waiting.shift()!;
            waiter.signal.removeEventListener("abort", waiter.onAbort);
            waiter.resolve(this.lease(waiter.count));
        }
    }

    private notifyIdle() {
        if (this.leased !== 0 || this.waiting.length !== 0)
            return;
        for (const resolve of this.idleWaiters.splice(0))
            resolve();
    }
}
