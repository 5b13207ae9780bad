import type { Logger } from "../../logger.js";
import type { ModelEntry } from "../registry/ModelEntry.js";
import { formatKeepAlive } from "../../settings/keepAlive.js";
import type { Clock } from "./Clock.js";
import type { Engine } from "./Engine.js";
import { EngineDisposedError } from "./EngineDisposedError.js";
import { MemoryBusyError } from "./MemoryBusyError.js";
import { busyPollMs, type MemoryBudget } from "./MemoryBudget.js";
import { memoryEstimateOf, noMemory, type MemoryEstimate, type ModelEstimate } from "./MemoryEstimate.js";
import { ModelLoadError } from "./ModelLoadError.js";

/** Where a model of the library is: `unloading` holds its memory until its engine is disposed. */
export type ModelState = "unloaded" | "loading" | "loaded" | "failed" | "unloading";

/** Why a model was unloaded (`/metrics`' `reason` label, and the log line); `admin`: the management API's unload. */
export type EvictionReason = "memory" | "idle" | "admin" | "shutdown";

/** Per model, what /v1/models reports of its place in the library. */
export type ModelStatus = {
    value: ModelState;
    /** Its estimate in RAM, and in a GPU's VRAM (0 on the CPU); null until first estimated. */
    estimated_bytes: number | null;
    estimated_vram_bytes: number | null;
    measured_bytes: number | null;
    /** Unix seconds of the last request that used it; null = never used. */
    last_used: number | null;
    keep_alive: string;
    pinned: boolean;
    preload: boolean;
    /**
     * A GGUF model's context, tokens per sequence, as its estimate planned it (the manifest's or `--context-size`, else
     * fitted to the memory budget: it may change at the next load); `train_context_size`: the file's own. Absent until
     * first estimated, and for models without one.
     */
    context_size?: number;
    train_context_size?: number;
    /** A failed model: why, and (Unix seconds) when a request will try again. */
    error?: string;
    retry_at?: number;
    /** A loading model whose engine tells how far it is: llama-server's router shape (`value` 0 to 1 of the weights' load). */
    progress?: LoadProgress;
};

/** llama-server's `status.progress` of a loading model: the stages, the one loading, how far it is (0 to 1). */
export type LoadProgress = {stages: string[], current: string, value: number};

/** What a slot needs of the library around it. */
export type SlotContext = {
    readonly clock: Clock;
    readonly logger: Logger;
    readonly budget: MemoryBudget;
    residentBytes(): number;
    /** Bytes the model will take once loaded (weights, context, worker copies, margin), per device (a number: all RAM). */
    estimateBytes(entry: ModelEntry): Promise<number | ModelEstimate>;
    /** `estimate`: what the load reserved, and what it counted that the engine must create the same (ModelEstimate). */
    createEngine(entry: ModelEntry, onLoadProgress: (fraction: number) => void, estimate: ModelEstimate): Promise<Engine>;
    /** Its capability's sentence for a refusal of a model larger than the whole budget (HostedTask.memoryHint). */
    memoryHint(entry: ModelEntry): string | undefined;
    /** The library is shutting down: nothing loads, no timer is set. */
    disposed(): boolean;
    /** A load ended (`seconds`: how long a successful one took), for /metrics. */
    loadEnded(id: string, result: "ok" | "failed", seconds?: number): void;
    /** A model was unloaded, for /metrics. */
    unloaded(id: string, reason: EvictionReason): void;
};

/** A model that failed to load is tried again by a request after 5 s, then 10, 20... at most 5 minutes. */
const firstRetryMs = 5000;
const maxRetryMs = 300_000;

/**
 * One registered model's life in the library: unloaded, loading (one load shared by every request that waits for it),
 * loaded, unloading (its memory held until its engine is disposed), failed (retried after a backoff). It records what
 * holds it (requests holding or waiting for it), unloads itself after its keep-alive once idle, and is evicted by the
 * memory budget only when idle and not pinned.
 */
export class ModelSlot {
    state: ModelState = "unloaded";
    engine: Engine | null = null;
    /** The load in progress, shared by every request that waits for it. */
    loading: Promise<Engine> | null = null;
    /** The dispose in progress. */
    unloading: Promise<void> | null = null;
    /** Bytes of the budget it holds (its estimate) per device, from the start of its load to the end of its unload. */
    reserved: MemoryEstimate = noMemory;
    /** Estimated once, before its first load. */
    estimated: ModelEstimate | null = null;
    /** What the process' resident memory grew by while it loaded (other loads at the same time blur it). */
    measuredBytes: number | null = null;
    /** When a request last resolved or released it (ms since the epoch). */
    lastUsed: number | null = null;
    /** Requests holding its engine (see RequestLease). */
    leases = 0;
    /** Requests waiting for it to load. */
    waiting = 0;
    /** How far its load in progress is (0 to 1), once its engine told; null otherwise. */
    loadProgress: number | null = null;
    /** Its last load's failure, and when a request may try again. */
    failure: {error: ModelLoadError, retryAt: number, count: number} | null = null;
    /** Cancels its keep-alive timer. */
    private cancelTimer: (() => void) | null = null;
    /** A failed preloaded model's retry (retryPreloadAt): apart from the keep-alive timer, which a request stops while it waits. */
    private cancelRetry: (() => void) | null = null;

    constructor(readonly entry: ModelEntry, readonly preload: boolean, readonly keepAliveMs: number | null, readonly pinned: boolean, private readonly context: SlotContext) {}

    /** Evicted only when nothing uses it: no request holds it or waits for it, and its engine reports no work. */
    idle(): boolean {
        if (this.state !== "loaded" || this.leases > 0 || this.waiting > 0)
            return false;
        const load = this.engine!.load();
        return load.busy === 0 && load.waiting === 0;
    }

    /** Requests running or waiting on it: the library's count or the engine's own, the larger (a request through the library is both). */
    requests(): number {
        const load = this.engine?.load();
        return Math.max(this.leases + this.waiting, (load?.busy ?? 0) + (load?.waiting ?? 0));
    }

    /** Why it holds its memory now (for the 503 of a load that found no room): pinned, busy with requests, idle, loading... */
    whyHeld(): string {
        if (this.state !== "loaded")
            return this.state;
        if (this.pinned)
            return "pinned";
        const requests = this.requests();
        return requests === 0 ? "idle" : `busy: ${requests} request${requests === 1 ? "" : "s"} running or waiting`;
    }

    status(): ModelStatus {
        return {
            value: this.state,
            estimated_bytes: this.estimated?.ram ?? null,
            estimated_vram_bytes: this.estimated?.vram ?? null,
            measured_bytes: this.measuredBytes,
            last_used: this.lastUsed == null ? null : Math.floor(this.lastUsed / 1000),
            keep_alive: formatKeepAlive(this.keepAliveMs),
            pinned: this.pinned,
            preload: this.preload,
            ...(this.estimated?.contextSize != null ? {context_size: this.estimated.contextSize} : {}),
            ...(this.estimated?.trainContextSize != null ? {train_context_size: this.estimated.trainContextSize} : {}),
            ...(this.state === "failed" && this.failure != null ? {error: this.failure.error.message, retry_at: Math.ceil(this.failure.retryAt / 1000)} : {}),
            ...(this.state === "loading" && this.loadProgress != null ? {progress: {stages: ["text_model"], current: "text_model", value: this.loadProgress}} : {})
        };
    }

    /**
     * Its engine, loading it (or joining its load) first. `signal`: the waiter goes away (the load goes on for the
     * others). A failed model throws its failure until its backoff ends, unless `retryNow` (an administrator's load).
     * `byPreload`: the preload's load, which evicts no other preloaded model to make room (MemoryBudget.reserve).
     */
    async ensureLoaded({signal, retryNow = false, byPreload = false}: {signal?: AbortSignal, retryNow?: boolean, byPreload?: boolean} = {}): Promise<Engine> {
        for (;;) {
            if (this.context.disposed())
                throw new EngineDisposedError(this.entry.id);
            if (this.state === "loaded")
                return this.engine!;
            if (this.state === "unloading") {
                await untilAborted(this.unloading!, signal);
                continue;
            }
            if (this.state === "failed" && this.failure != null && this.context.clock.now() < this.failure.retryAt && !(retryNow && !this.failure.error.permanent))
                throw this.failure.error;
            this.loading ??= this.load(byPreload);
            return await untilAborted(this.loading, signal);
        }
    }

    /** Frees its engine (after the requests in flight); the budget's bytes come back once the engine is disposed. */
    unload(reason: EvictionReason, forModel?: string): Promise<void> {
        const {context, entry} = this;
        const engine = this.engine!;
        this.cancelTimer?.();
        this.state = "unloading";
        this.engine = null;
        context.unloaded(entry.id, reason);
        const why = reason === "memory" ? `to make room for '${forModel}'`
            : reason === "idle" ? `idle for ${formatKeepAlive(this.keepAliveMs)} (keep-alive)`
            : reason === "admin" ? "unloaded by an administrator" : "the server is shutting down";
        const residentBefore = context.residentBytes();
        this.unloading = (async () => {
            try {
                await engine.dispose();
            } catch (error) {
                context.logger.warn(`Unloading '${entry.id}' failed`, {error: (error as Error).message});
            } finally {
                if (reason !== "shutdown")
                    context.logger.info(`Unloaded '${entry.id}': ${why}`, {
                        reason, estimated_mb: toMb(this.reserved.ram), ...vramMb(this.reserved), rss_freed_mb: toMb(residentBefore - context.residentBytes())
                    });
                this.reserved = noMemory;
                this.state = "unloaded";
                this.unloading = null;
                context.budget.notifyChange();
            }
        })();
        return this.unloading;
    }

    /** A request took the model (it is held until `release`). */
    hold() {
        this.leases++;
    }

    /** A request that held the model ended. */
    release() {
        this.leases--;
        this.lastUsed = this.context.clock.now();
        this.context.budget.notifyChange();
        this.settle();
    }

    /** An idle loaded model gets its keep-alive timer; when it fires on a model still at work, it looks again later. */
    settle() {
        const {context} = this;
        if (context.disposed() || this.state !== "loaded" || this.leases > 0 || this.waiting > 0 || this.keepAliveMs == null)
            return;
        this.cancelTimer?.();
        const check = () => {
            this.cancelTimer = null;
            if (context.disposed() || this.state !== "loaded")
                return;
            if (this.idle())
                void this.unload("idle");
            else if (this.leases === 0 && this.waiting === 0)
                this.cancelTimer = context.clock.setTimer(Math.max(this.keepAliveMs!, busyPollMs), check);
        };
        this.cancelTimer = context.clock.setTimer(this.keepAliveMs, check);
    }

    /** Stops its keep-alive timer (a request waits for it, or holds it); a failed preloaded model's retry goes on. */
    stopTimer() {
        this.cancelTimer?.();
        this.cancelTimer = null;
    }

    /** Stops its timers, the retry's too (shutdown). */
    stopTimers() {
        this.stopTimer();
        this.cancelRetry?.();
        this.cancelRetry = null;
    }

    /** A preloaded model whose last load failed and that is not loaded since (its retry may be loading it now). */
    get preloadFailed(): boolean {
        return this.preload && this.failure != null && (this.state === "failed" || this.state === "loading");
    }

    private load(byPreload: boolean): Promise<Engine> {
        const {entry, context} = this;
        const previous = this.state;
        this.state = "loading";
        this.cancelTimer?.();
        return (async () => {
            let reserved = false;
            try {
                // Once, unless it was fitted to the room there was then (a pinned model may have loaded since).
                let estimated: MemoryEstimate & {fitted?: boolean};
                try {
                    estimated = this.estimated = this.estimated != null && this.estimated.fitted !== true
                        ? this.estimated : memoryEstimateOf(await context.estimateBytes(entry));
                } catch (error) {
                    // A file that cannot be read for its estimate does not load either: a failure like any other.
                    throw new ModelLoadError(entry, error);
                }
                const tooLarge = await context.budget.tooLarge(entry.id, estimated, context.memoryHint(entry));
                if (tooLarge != null)
                    throw new ModelLoadError(entry, tooLarge, "permanent");
                try {
                    await context.budget.reserve(this, estimated, context.disposed, byPreload);
                } catch (error) {
                    // The preload's load (or its retry) that cannot get its memory failed to load: logged with who holds
                    // it, retried on the backoff by itself, /health/ready 503 until it loads. A request's load (of any
                    // model, preloaded ones too) just gets the 503, the model left as it was.
                    if (byPreload && error instanceof MemoryBusyError)
                        throw new ModelLoadError(entry, error, "memory");
                    throw error;
                }
                reserved = true;
                const residentBefore = context.residentBytes();
                const started = performance.now();
                let engine: Engine;
                try {
                    engine = await context.createEngine(entry, (fraction) => {
                        if (this.state === "loading")
                            this.loadProgress = Math.min(1, Math.max(0, fraction));
                    }, estimated);
                } catch (error) {
                    throw new ModelLoadError(entry, error);
                }
                const seconds = (performance.now() - started) / 1000;
                if (context.disposed()) {
                    await engine.dispose();
                    throw new EngineDisposedError(entry.id);
                }
                this.engine = engine;
                this.state = "loaded";
                this.failure = null;
                this.measuredBytes = Math.max(0, context.residentBytes() - residentBefore);
                context.loadEnded(entry.id, "ok", seconds);
                const inUse = context.budget.inUse();
                context.logger.info(`Loaded '${entry.id}'`, {
                    ms: Math.round(seconds * 1000), estimated_mb: toMb(estimated.ram), rss_growth_mb: toMb(this.measuredBytes),
                    budget_used_mb: toMb(inUse.ram), budget_mb: toMb(context.budget.ramBytes),
                    ...(estimated.vram > 0 ? {estimated_vram_mb: toMb(estimated.vram), vram_budget_used_mb: toMb(inUse.vram), vram_budget_mb: toMb(context.budget.vramBudget)} : {}),
                    ...engine.describe?.()
                });
                return engine;
            } catch (error) {
                if (reserved)
                    this.reserved = noMemory;
                if (error instanceof ModelLoadError) {
                    const count = (previous === "failed" ? this.failure?.count ?? 0 : 0) + 1;
                    const retryAt = error.permanent ? Number.POSITIVE_INFINITY : context.clock.now() + Math.min(maxRetryMs, firstRetryMs * 2 ** (count - 1));
                    this.failure = {error, retryAt, count};
                    this.state = "failed";
                    context.loadEnded(entry.id, "failed");
                    context.logger.error(error.message, error.permanent ? {} : {retry_in_s: Math.round((retryAt - context.clock.now()) / 1000)});
                    if (this.preload && !error.permanent)
                        this.retryPreloadAt(retryAt);
                } else {
                    this.state = previous === "failed" ? "failed" : "unloaded";
                    // A request's load of a failed preloaded model that found no room: the model is failed still, and
                    // its retry (which may have come while this load ran, and left it to this one) goes on.
                    if (this.state === "failed" && this.preload && this.cancelRetry == null && this.failure != null && !this.failure.error.permanent)
                        this.retryPreloadAt(Math.max(this.failure.retryAt, context.clock.now() + firstRetryMs));
                }
                throw error;
            } finally {
                this.loading = null;
                this.loadProgress = null;
                context.budget.notifyChange();
            }
        })();
    }

    /** A preloaded model that failed is loaded again when its backoff ends, without waiting for a request. */
    private retryPreloadAt(retryAt: number) {
        const {context} = this;
        this.cancelRetry?.();
        this.cancelRetry = context.clock.setTimer(Math.max(0, retryAt - context.clock.now()), () => {
            this.cancelRetry = null;
            if (context.disposed() || this.state !== "failed")
                return;
            // Loaded, it waits for its first use as at the preload (its keep-alive counts from then).
            this.loading ??= this.load(true);
            this.loading.catch(() => {});
        });
    }
}

function toMb(bytes: number | null) {
    return bytes == null ? null : Math.round(bytes / 2 ** 20);
}

/** The VRAM part of an unload's log line, for a model that held VRAM. */
function vramMb(reserved: MemoryEstimate) {
    return reserved.vram > 0 ? {estimated_vram_mb: toMb(reserved.vram)} : {};
}

/** `promise`, unless `signal` aborts first (then its reason): the work behind the promise goes on for the others. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    if (signal == null)
        return promise;
    if (signal.aborted)
        return Promise.reject(signal.reason);
    return new Promise<T>((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        signal.addEventListener("abort", onAbort, {once: true});
        promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
    });
}
