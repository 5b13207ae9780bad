import { QueueFullError } from "../engines/EngineErrors.js";

export type SlotLease<T> = {
    readonly slots: readonly T[];
    release(): void;
};

type Waiter<T> = {
    count: number;
    resolve: (lease: SlotLease<T>) => void;
    reject: (error: unknown) => void;
    signal: AbortSignal;
    onAbort: () => void;
};

/**
 * A fixed set of slots (context sequences) handed out first come, first served, with a bounded
 * waiting line. `acquire` throws synchronously when the line is full, so the caller can answer
 * 503 before it has sent anything. A request for several slots (n > 1) gets them all at once, and
 * nobody behind it jumps ahead, so it cannot starve.
 */
export class SlotPool<T> {
    private readonly free: T[];
    private readonly waiting: Waiter<T>[] = [];
    private closedError: Error | null = null;

    constructor(slots: readonly T[], private readonly maxWaiting: number, private readonly name: string) {
        this.free = [...slots];
        this.capacity = slots.length;
    }

    readonly capacity: number;

    get freeCount() {
        return this.free.length;
    }

    get waitingCount() {
        return this.waiting.length;
    }

    acquire(count: number, signal: AbortSignal): Promise<SlotLease<T>> {
        if (this.closedError != null)
            throw this.closedError;
        if (count < 1 || count > this.capacity)
            throw new RangeError(`Cannot acquire ${count} of ${this.capacity} slots`);
        signal.throwIfAborted();

        if (this.waiting.length === 0 && this.free.length >= count)
            return Promise.resolve(this.lease(count));
        if (this.waiting.length >= this.maxWaiting)
            throw new QueueFullError(this.name, this.maxWaiting);

        return new Promise<SlotLease<T>>((resolve, reject) => {
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

    /** Rejects everyone waiting and every later acquire; leases already out stay valid. */
    close(error: Error) {
        this.closedError = error;
        for (const waiter of this.waiting.splice(0)) {
            waiter.signal.removeEventListener("abort", waiter.onAbort);
            waiter.reject(error);
        }
    }

    private lease(count: number): SlotLease<T> {
        const slots = this.free.splice(0, count);
        let released = false;
        return {
            slots,
            release: () => {
                if (released)
                    return;
                released = true;
                this.free.push(...slots);
                this.dispatch();
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
}
