import type { ModelEntry } from "../registry/ModelEntry.js";
import type { Engine } from "./Engine.js";

/** Where a model of the library is: `unloading` holds its memory until its engine is disposed. */
export type ModelState = "unloaded" | "loading" | "loaded" | "failed" | "unloading";

/** Why a model was unloaded (`/metrics`' `reason` label, and the log line). */
export type EvictionReason = "memory" | "idle" | "shutdown";

/** The library's record of one registered model: its state, its engine when loaded, and what holds it. */
export class ModelSlot {
    state: ModelState = "unloaded";
    engine: Engine | null = null;
    /** The load in progress, shared by every request that waits for it. */
    loading: Promise<Engine> | null = null;
    /** The dispose in progress. */
    unloading: Promise<void> | null = null;
    /** Bytes of the budget it holds (its estimate), from the start of its load to the end of its unload. */
    reservedBytes = 0;
    /** Estimated once, before its first load. */
    estimatedBytes: number | null = null;
    /** What the process' resident memory grew by while it loaded (other loads at the same time blur it). */
    measuredBytes: number | null = null;
    /** When a request last resolved or released it (ms since the epoch). */
    lastUsed: number | null = null;
    /** Requests holding its engine (see RequestLease). */
    leases = 0;
    /** Requests waiting for it to load. */
    waiting = 0;
    /** Its last load's failure, and when a request may try again. */
    failure: {error: Error, retryAt: number, count: number} | null = null;
    /** Cancels its keep-alive (or retry) timer. */
    cancelTimer: (() => void) | null = null;

    constructor(readonly entry: ModelEntry, readonly preload: boolean, readonly keepAliveMs: number | null, readonly pinned: boolean) {}

    /** Evicted only when nothing uses it: no request holds it or waits for it, and its engine reports no work. */
    idle(): boolean {
        if (this.state !== "loaded" || this.leases > 0 || this.waiting > 0)
            return false;
        const load = this.engine!.load();
        return load.busy === 0 && load.waiting === 0;
    }
}
