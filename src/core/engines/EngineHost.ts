import type { Logger } from "../../logger.js";
import { ApiError } from "../http/ApiError.js";
import type { ModelEntry } from "../registry/ModelEntry.js";
import type { ModelRegistry } from "../registry/ModelRegistry.js";
import { formatKeepAlive } from "../../settings/keepAlive.js";
import { systemClock, type Clock } from "./Clock.js";
import type { Engine } from "./Engine.js";
import { EngineDisposedError } from "./EngineDisposedError.js";
import { formatBytes, memoryBusy, modelLoadFailed, modelTooLarge } from "./libraryErrors.js";
import { ModelLoadError } from "./ModelLoadError.js";
import { ModelSlot, type EvictionReason, type ModelState } from "./ModelSlot.js";
import { currentRequestLease, withRequestLease } from "./requestLease.js";

/** Loads the engine of one manifest entry. Injectable, so tests run the HTTP layer against fakes. */
export type EngineFactory = (entry: ModelEntry) => Promise<Engine>;

/** A task the host serves: its endpoints (for messages and /v1/models) and how its engines are made. */
export type HostedTask = {task: string, endpoints: readonly string[], createEngine: EngineFactory};

/** `loading` while preloaded models load; `failed` while one of them has failed (and not loaded since). */
export type HostState = "loading" | "ready" | "failed" | "disposed";

/** How the library keeps its models (see docs/models.md "The model library"). */
export type LibraryOptions = {
    /** Bytes every loaded model's estimate must fit in together. */
    memoryBudget: number;
    /** Idle time before a model is unloaded, unless its manifest entry says otherwise; null = never. */
    keepAliveMs: number | null;
    /** Load every model at start (a manifest entry's `preload` wins). */
    preloadAll: boolean;
    /** How long a load waits for busy models to free the memory it needs before its requests get 503. */
    memoryWaitMs: number;
    /** Bytes a model will take once loaded (weights, context, worker copies, margin). */
    estimateBytes(entry: ModelEntry): Promise<number>;
    clock?: Clock;
    /** The process' resident memory, measured around loads and unloads for the log. */
    residentBytes?: () => number;
};

/** A model that failed to load is tried again by a request after 5 s, then 10, 20... at most 5 minutes. */
const firstRetryMs = 5000;
const maxRetryMs = 300_000;
/** While a load waits for memory, engines' own load (which has no event) is looked at this often. */
const busyPollMs = 1000;
/** Retry-After of a 503 for memory held by busy models. */
const memoryRetryAfterSeconds = 5;

/** Per model, what /v1/models reports of its place in the library. */
export type ModelStatus = {
    value: ModelState;
    estimated_bytes: number | null;
    measured_bytes: number | null;
    /** Unix seconds of the last request that used it; null = never used. */
    last_used: number | null;
    keep_alive: string;
    pinned: boolean;
    preload: boolean;
    /** A failed model: why, and (Unix seconds) when a request will try again. */
    error?: string;
    retry_at?: number;
};

/**
 * The model library: every registered model, whatever its task. Models are loaded when a request first
 * names one (several requests share one load) or at start when preloaded; they live within a memory
 * budget in bytes, estimated before loading: a load that does not fit evicts idle models, least recently
 * used first (never a pinned one, never one a request holds or waits for); an idle model is unloaded after
 * its keep-alive. A model that fails to load answers its requests with the reason and is tried again after
 * a backoff; the others keep serving.
 */
export class EngineHost {
    private readonly slots = new Map<string, ModelSlot>();
    private readonly tasks: ReadonlyMap<string, HostedTask>;
    private readonly clock: Clock;
    private readonly residentBytes: () => number;
    private disposed = false;
    private preloading = false;
    private readonly loadSecondsById = new Map<string, number>();
    /** Loads by model and result (`ok`, `failed`), and evictions by model and reason, for /metrics. */
    readonly loadCounts = new Map<string, {ok: number, failed: number}>();
    readonly evictionCounts = new Map<string, Map<EvictionReason, number>>();
    private changeWaiters = new Set<() => void>();

    constructor(readonly registry: ModelRegistry, tasks: readonly HostedTask[], private readonly logger: Logger, readonly options: LibraryOptions) {
        this.tasks = new Map(tasks.map((task) => [task.task, task]));
        this.clock = options.clock ?? systemClock;
        this.residentBytes = options.residentBytes ?? (() => process.memoryUsage.rss());
        for (const entry of registry.entries)
            this.slots.set(entry.id, new ModelSlot(entry, entry.preload ?? options.preloadAll, keepAliveOf(entry, options), entry.pin ?? false));
    }

    get state(): HostState {
        if (this.disposed)
            return "disposed";
        if (this.preloading)
            return "loading";
        return [...this.slots.values()].some((slot) => slot.preload && slot.state === "failed") ? "failed" : "ready";
    }

    get memoryBudget() {
        return this.options.memoryBudget;
    }

    /** Bytes of the budget held by models loaded, loading or being unloaded. */
    memoryInUse(): number {
        let bytes = 0;
        for (const slot of this.slots.values())
            bytes += slot.reservedBytes;
        return bytes;
    }

    /** Per model holding memory: the bytes of the budget it holds (its estimate). */
    memoryByModel(): ReadonlyMap<string, number> {
        return new Map([...this.slots.values()].filter((slot) => slot.reservedBytes > 0).map((slot) => [slot.entry.id, slot.reservedBytes]));
    }

    /**
     * Loads the preloaded models (manifest `preload`, or all with `--preload-all`), one after another in manifest
     * order. Resolves when all are loaded; rejects with the first failure once all were tried (the others still serve).
     */
    async preload(): Promise<void> {
        this.preloading = true;
        let firstError: unknown;
        try {
            for (const slot of this.slots.values()) {
                if (!slot.preload || this.disposed)
                    continue;
                try {
                    await this.ensureLoaded(slot);
                } catch (error) {
                    firstError ??= error;
                }
                this.settle(slot);
            }
        } finally {
            this.preloading = false;
        }
        if (firstError !== undefined)
            throw firstError;
    }

    /** Runs one request's handling: the models it resolves stay held (never evicted) until it ends. */
    withRequest<T>(signal: AbortSignal, handle: () => Promise<T>): Promise<T> {
        return withRequestLease(signal, handle);
    }

    /** Per loaded model: how busy it is (reported by /health). */
    loads() {
        return Object.fromEntries([...this.slots.values()].filter((slot) => slot.state === "loaded").map((slot) => [slot.entry.id, slot.engine!.load()]));
    }

    /** Per model loaded at least once: how long its last load took, in seconds (for /metrics). */
    loadSeconds(): ReadonlyMap<string, number> {
        return this.loadSecondsById;
    }

    /** Per model: its state, memory, last use, keep-alive (for /v1/models and /metrics). */
    statusOf(entry: ModelEntry): ModelStatus {
        const slot = this.slots.get(entry.id)!;
        return {
            value: slot.state,
            estimated_bytes: slot.estimatedBytes,
            measured_bytes: slot.measuredBytes,
            last_used: slot.lastUsed == null ? null : Math.floor(slot.lastUsed / 1000),
            keep_alive: formatKeepAlive(slot.keepAliveMs),
            pinned: slot.pinned,
            preload: slot.preload,
            ...(slot.state === "failed" && slot.failure != null ? {error: slot.failure.error.message, retry_at: Math.ceil(slot.failure.retryAt / 1000)} : {})
        };
    }

    endpointsOf(entry: ModelEntry): readonly string[] {
        return this.tasks.get(entry.task)?.endpoints ?? [];
    }

    /**
     * The model a request names (id, alias or `<family>-latest`) and its engine, for an endpoint of `task`:
     * 404 for an unknown name, 400 for a model of another task. An unloaded model is loaded first (the request
     * waits; a client that goes away stops waiting, the load goes on for the others); a failed one answers 503
     * with the reason until its backoff ends. Within a request (see `withRequest`) the model is held until it ends.
     */
    async engineFor<E extends Engine>(name: string, task: string): Promise<{entry: ModelEntry, engine: E}> {
        const entry = this.registry.resolve(name);
        if (entry == null)
            throw ApiError.modelNotFound(name, this.registry.names);
        if (entry.task !== task)
            throw ApiError.invalidRequest(
                `The model '${entry.id}' is a${/^[aeiou]/.test(entry.task) ? "n" : ""} ${entry.task} model; it serves ${this.endpointsOf(entry).join(", ")}, not ${this.tasks.get(task)?.endpoints.join(", ")}.`,
                "model", "model_not_supported");
        const slot = this.slots.get(entry.id)!;
        const lease = currentRequestLease();
        slot.waiting++;
        slot.cancelTimer?.();
        try {
            const engine = await this.ensureLoaded(slot, lease?.signal);
            slot.lastUsed = this.clock.now();
            if (lease != null) {
                slot.leases++;
                lease.hold(() => this.release(slot));
            }
            return {entry, engine: engine as E};
        } catch (error) {
            if (error instanceof ModelLoadError && error.permanent)
                throw error.cause;
            if (error instanceof ModelLoadError)
                throw modelLoadFailed(error.message, Math.max(1, Math.ceil((slot.failure!.retryAt - this.clock.now()) / 1000)));
            throw error;
        } finally {
            slot.waiting--;
            this.settle(slot);
        }
    }

    async dispose() {
        this.disposed = true;
        this.notifyChange();
        const slots = [...this.slots.values()];
        for (const slot of slots)
            slot.cancelTimer?.();
        // A load under way finishes first (waiting for memory, it stops at once): its engine is then disposed by the load itself.
        await Promise.allSettled(slots.map((slot) => slot.loading));
        await Promise.allSettled(slots.map((slot) => slot.state === "loaded" ? this.unload(slot, "shutdown") : slot.unloading));
    }

    /** The model's engine, loading it (or joining its load) first. */
    private async ensureLoaded(slot: ModelSlot, signal?: AbortSignal): Promise<Engine> {
        for (;;) {
            if (this.disposed)
                throw new EngineDisposedError(slot.entry.id);
            if (slot.state === "loaded")
                return slot.engine!;
            if (slot.state === "unloading") {
                await untilAborted(slot.unloading!, signal);
                continue;
            }
            if (slot.state === "failed" && slot.failure != null && this.clock.now() < slot.failure.retryAt)
                throw slot.failure.error;
            slot.loading ??= this.load(slot);
            return await untilAborted(slot.loading, signal);
        }
    }

    private load(slot: ModelSlot): Promise<Engine> {
        const {entry} = slot;
        const previous = slot.state;
        slot.state = "loading";
        slot.cancelTimer?.();
        return (async () => {
            let reserved = false;
            try {
                slot.estimatedBytes ??= await this.options.estimateBytes(entry);
                if (slot.estimatedBytes > this.options.memoryBudget)
                    throw new ModelLoadError(entry, modelTooLarge(entry.id, slot.estimatedBytes, this.options.memoryBudget), "permanent");
                await this.reserve(slot, slot.estimatedBytes);
                reserved = true;
                const residentBefore = this.residentBytes();
                const started = performance.now();
                let engine: Engine;
                try {
                    engine = await this.tasks.get(entry.task)!.createEngine(entry);
                } catch (error) {
                    throw new ModelLoadError(entry, error);
                }
                const seconds = (performance.now() - started) / 1000;
                if (this.disposed) {
                    await engine.dispose();
                    throw new EngineDisposedError(entry.id);
                }
                slot.engine = engine;
                slot.state = "loaded";
                slot.failure = null;
                slot.measuredBytes = Math.max(0, this.residentBytes() - residentBefore);
                this.loadSecondsById.set(entry.id, seconds);
                this.countLoad(entry.id, "ok");
                this.logger.info(`Loaded '${entry.id}'`, {
                    ms: Math.round(seconds * 1000), estimated_mb: toMb(slot.estimatedBytes), rss_growth_mb: toMb(slot.measuredBytes),
                    budget_used_mb: toMb(this.memoryInUse()), budget_mb: toMb(this.options.memoryBudget), ...engine.describe?.()
                });
                return engine;
            } catch (error) {
                if (reserved)
                    slot.reservedBytes = 0;
                if (error instanceof ModelLoadError) {
                    const count = (previous === "failed" ? slot.failure?.count ?? 0 : 0) + 1;
                    const retryAt = error.permanent ? Number.POSITIVE_INFINITY : this.clock.now() + Math.min(maxRetryMs, firstRetryMs * 2 ** (count - 1));
                    slot.failure = {error, retryAt, count};
                    slot.state = "failed";
                    this.countLoad(entry.id, "failed");
                    this.logger.error(error.message, error.permanent ? {} : {retry_in_s: Math.round((retryAt - this.clock.now()) / 1000)});
                    if (slot.preload && !error.permanent)
                        this.retryPreloadAt(slot, retryAt);
                } else
                    slot.state = previous === "failed" ? "failed" : "unloaded";
                throw error;
            } finally {
                slot.loading = null;
                this.notifyChange();
            }
        })();
    }

    /**
     * Holds `bytes` of the budget for the model, evicting idle models (least recently used first) when they
     * free enough; otherwise waits for models to become idle, at most `memoryWaitMs`, then 503 naming the holders.
     */
    private async reserve(slot: ModelSlot, bytes: number) {
        const deadline = this.clock.now() + this.options.memoryWaitMs;
        for (;;) {
            if (this.disposed)
                throw new EngineDisposedError(slot.entry.id);
            const free = this.options.memoryBudget - this.memoryInUse();
            if (bytes <= free) {
                slot.reservedBytes = bytes;
                return;
            }
            const victims: ModelSlot[] = [];
            let freed = 0;
            for (const candidate of this.evictionOrder()) {
                if (free + freed >= bytes)
                    break;
                victims.push(candidate);
                freed += candidate.reservedBytes;
            }
            if (free + freed >= bytes) {
                await Promise.all(victims.map((victim) => this.unload(victim, "memory", slot.entry.id)));
                continue;
            }
            const now = this.clock.now();
            if (now >= deadline)
                throw memoryBusy(slot.entry.id, bytes, free, this.options.memoryBudget, this.holders(), memoryRetryAfterSeconds);
            await this.nextChange(Math.min(deadline - now, busyPollMs));
        }
    }

    /** Models that may be evicted now, least recently used first. */
    private evictionOrder(): ModelSlot[] {
        return [...this.slots.values()]
            .filter((slot) => !slot.pinned && slot.idle())
            .sort((a, b) => (a.lastUsed ?? 0) - (b.lastUsed ?? 0));
    }

    /** The models holding memory, and why each cannot go (for the 503 of a load that found no room). */
    private holders(): string[] {
        return [...this.slots.values()].filter((slot) => slot.reservedBytes > 0).map((slot) => {
            const load = slot.engine?.load();
            // A request through the library is also one the engine counts: the larger of the two.
            const requests = Math.max(slot.leases + slot.waiting, (load?.busy ?? 0) + (load?.waiting ?? 0));
            const why = slot.state !== "loaded" ? slot.state
                : slot.pinned ? "pinned"
                : `busy: ${requests} request${requests === 1 ? "" : "s"} running or waiting`;
            return `'${slot.entry.id}' (${formatBytes(slot.reservedBytes)}, ${why})`;
        });
    }

    private unload(slot: ModelSlot, reason: EvictionReason, forModel?: string): Promise<void> {
        const engine = slot.engine!;
        slot.cancelTimer?.();
        slot.state = "unloading";
        slot.engine = null;
        const byReason = this.evictionCounts.get(slot.entry.id) ?? new Map<EvictionReason, number>();
        byReason.set(reason, (byReason.get(reason) ?? 0) + 1);
        this.evictionCounts.set(slot.entry.id, byReason);
        const why = reason === "memory" ? `to make room for '${forModel}'`
            : reason === "idle" ? `idle for ${formatKeepAlive(slot.keepAliveMs)} (keep-alive)` : "the server is shutting down";
        const residentBefore = this.residentBytes();
        slot.unloading = (async () => {
            try {
                await engine.dispose();
            } catch (error) {
                this.logger.warn(`Unloading '${slot.entry.id}' failed`, {error: (error as Error).message});
            } finally {
                if (reason !== "shutdown")
                    this.logger.info(`Unloaded '${slot.entry.id}': ${why}`, {
                        reason, estimated_mb: toMb(slot.reservedBytes), rss_freed_mb: toMb(residentBefore - this.residentBytes())
                    });
                slot.reservedBytes = 0;
                slot.state = "unloaded";
                slot.unloading = null;
                this.notifyChange();
            }
        })();
        return slot.unloading;
    }

    /** A request that held the model ended. */
    private release(slot: ModelSlot) {
        slot.leases--;
        slot.lastUsed = this.clock.now();
        this.notifyChange();
        this.settle(slot);
    }

    /** An idle loaded model gets its keep-alive timer; when it fires on a model still at work, it looks again later. */
    private settle(slot: ModelSlot) {
        if (this.disposed || slot.state !== "loaded" || slot.leases > 0 || slot.waiting > 0 || slot.keepAliveMs == null)
            return;
        slot.cancelTimer?.();
        const check = () => {
            slot.cancelTimer = null;
            if (this.disposed || slot.state !== "loaded")
                return;
            if (slot.idle())
                void this.unload(slot, "idle");
            else if (slot.leases === 0 && slot.waiting === 0)
                slot.cancelTimer = this.clock.setTimer(Math.max(slot.keepAliveMs!, busyPollMs), check);
        };
        slot.cancelTimer = this.clock.setTimer(slot.keepAliveMs, check);
    }

    /** A preloaded model that failed is loaded again when its backoff ends, without waiting for a request. */
    private retryPreloadAt(slot: ModelSlot, retryAt: number) {
        slot.cancelTimer?.();
        slot.cancelTimer = this.clock.setTimer(Math.max(0, retryAt - this.clock.now()), () => {
            slot.cancelTimer = null;
            if (this.disposed || slot.state !== "failed")
                return;
            slot.loading ??= this.load(slot);
            slot.loading.then(() => this.settle(slot), () => {});
        });
    }

    private countLoad(id: string, result: "ok" | "failed") {
        const counts = this.loadCounts.get(id) ?? {ok: 0, failed: 0};
        counts[result]++;
        this.loadCounts.set(id, counts);
    }

    private notifyChange() {
        const waiters = this.changeWaiters;
        this.changeWaiters = new Set();
        for (const wake of waiters)
            wake();
    }

    /** Resolves at the next change of the library (a load or unload ended, a request let go of a model) or after `ms`. */
    private nextChange(ms: number): Promise<void> {
        return new Promise<void>((resolve) => {
            const cancel = this.clock.setTimer(ms, wake);
            function wake() {
                cancel();
                resolve();
            }
            this.changeWaiters.add(wake);
        });
    }
}

/**
 * A model's keep-alive: its manifest entry's; else, for a preloaded model, forever (it was loaded at start to be
 * warm, as before the library); else the server's.
 */
function keepAliveOf(entry: ModelEntry, options: LibraryOptions): number | null {
    if (entry.keepAliveMs !== undefined)
        return entry.keepAliveMs;
    return entry.preload ?? options.preloadAll ? null : options.keepAliveMs;
}

function toMb(bytes: number | null) {
    return bytes == null ? null : Math.round(bytes / 2 ** 20);
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
