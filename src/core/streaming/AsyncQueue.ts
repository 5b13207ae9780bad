/**
 * A single-consumer async queue: hands the pieces of one response from the side producing them
 * (engine callbacks, in order: a speech response's encoded chunks, a transcription's segments) to
 * the one loop that writes them. The writer can wait for a slow client without blocking the
 * engine's callbacks, and a failure on either side reaches the writer as a rejected `next()`.
 */
export class AsyncQueue<T> {
    private readonly items: T[] = [];
    private ended = false;
    private failure: {error: unknown} | null = null;
    private waiter: {resolve(item: T | null): void, reject(error: unknown): void} | null = null;

    push(item: T) {
        if (this.ended || this.failure != null)
            return;
        if (this.waiter != null) {
            const {resolve} = this.waiter;
            this.waiter = null;
            resolve(item);
        } else {
            this.items.push(item);
        }
    }

    /** No more items: `next()` resolves null once the queued ones are taken. */
    end() {
        this.ended = true;
        this.wake();
    }

    /** `next()` rejects with `error` once the items queued before it are taken. */
    fail(error: unknown) {
        if (this.ended || this.failure != null)
            return;
        this.failure = {error};
        this.wake();
    }

    /** The next item, null after `end()`; one caller at a time. */
    next(): Promise<T | null> {
        if (this.items.length > 0)
            return Promise.resolve(this.items.shift()!);
        if (this.failure != null)
            return Promise.reject(this.failure.error);
        if (this.ended)
            return Promise.resolve(null);
        return new Promise((resolve, reject) => this.waiter = {resolve, reject});
    }

    private wake() {
        if (this.waiter == null || this.items.length > 0)
            return;
        const waiter = this.waiter;
        this.waiter = null;
        if (this.failure != null)
            waiter.reject(this.failure.error);
        else
            waiter.resolve(null);
    }
}
