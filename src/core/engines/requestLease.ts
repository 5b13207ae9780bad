import { AsyncLocalStorage } from "node:async_hooks";

/**
 * What one request holds of the model library: the models it resolved, released when the request ends.
 * A model a request holds is never evicted, even between resolving it and submitting work to its engine
 * (an upload being decoded, a prompt being rendered). Carried by AsyncLocalStorage, so the handlers'
 * `await engines.engineFor(name, task)` needs no extra argument.
 */
export class RequestLease {
    private readonly releases: (() => void)[] = [];

    /** `signal`: the request's abort (client gone, shutdown); a request waiting for a load stops waiting on it. */
    constructor(readonly signal: AbortSignal) {}

    hold(release: () => void) {
        this.releases.push(release);
    }

    releaseAll() {
        for (const release of this.releases.splice(0))
            release();
    }
}

const storage = new AsyncLocalStorage<RequestLease>();

/** Runs a request's handling with a lease; everything it resolved is released when `handle` settles. */
export async function withRequestLease<T>(signal: AbortSignal, handle: () => Promise<T>): Promise<T> {
    const lease = new RequestLease(signal);
    try {
        return await storage.run(lease, handle);
    } finally {
        lease.releaseAll();
    }
}

/** The lease of the request being handled; undefined outside one (a preload, a test calling the host directly). */
export function currentRequestLease(): RequestLease | undefined {
    return storage.getStore();
}
