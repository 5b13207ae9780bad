import type { Logger } from "../../logger.js";
import { defaultKeepAliveMs } from "../../settings/keepAlive.js";
import { ApiError } from "../http/ApiError.js";
import type { ModelEntry } from "../registry/ModelEntry.js";
import type { Modalities, ModalitiesOf } from "../registry/Modalities.js";
import type { ModelRegistry } from "../registry/ModelRegistry.js";
import { systemClock, type Clock } from "./Clock.js";
import type { Engine } from "./Engine.js";
import { modelInUse, modelLoadFailed } from "./libraryErrors.js";
import { MemoryBudget, type VramBudget } from "./MemoryBudget.js";
import type { MemoryEstimate, ModelEstimate } from "./MemoryEstimate.js";
import { ModelLoadError } from "./ModelLoadError.js";
import { ModelSlot, type EvictionReason, type ModelStatus, type SlotContext } from "./ModelSlot.js";
import { preloadOverBudget } from "./preloadOverBudget.js";
import { currentRequestLease, withRequestLease } from "./requestLease.js";

export type { ModelStatus } from "./ModelSlot.js";

/**
 * Loads the engine of one manifest entry; `onLoadProgress` hears how far the load is (0 to 1), when the engine can tell;
 * `estimate`: its memory estimate, with what it counted that the engine must create the same (ModelEstimate).
 * Injectable, so tests run the HTTP layer against fakes.
 */
export type EngineFactory = (entry: ModelEntry, onLoadProgress?: (fraction: number) => void, estimate?: ModelEstimate) => Promise<Engine>;

/**
 * A task the host serves: its endpoints (for messages and /v1/models), what its models take in and give out (for
 * /v1/models; none = not said) and how its engines are made.
 */
export type HostedTask = {
    task: string, endpoints: readonly string[], modalities?: ModalitiesOf, createEngine: EngineFactory,
    /** A sentence added to a model's `model_too_large` refusal: what sizes its memory and which settings change it. */
    memoryHint?: (entry: ModelEntry) => string | undefined
};

/** `loading` while preloaded models load; `failed` while one of them has failed (and not loaded since). */
export type HostState = "loading" | "ready" | "failed" | "disposed";

/** How the library keeps its models (see docs/models.md "The model library"). */
export type LibraryOptions = {
    /** Bytes of RAM every loaded model's estimate must fit in together. */
    memoryBudget: number;
    /** Bytes of VRAM the models' GPU parts must fit in together, or how to learn them; default 0 (no GPU). */
    vramBudget?: VramBudget;
    /**
     * Idle time before a model is unloaded, unless its manifest entry says otherwise; null = never; undefined = none
     * given: 5 minutes (defaultKeepAliveMs), a preloaded model forever.
     */
    keepAliveMs?: number | null;
    /** Load every model at start (a manifest entry's `preload` wins). */
    preloadAll: boolean;
    /** How long a load waits for busy models to free the memory it needs before its requests get 503. */
    memoryWaitMs: number;
    /** Bytes a model will take once loaded (weights, context, worker copies, margin), per device (a number: all RAM). */
    estimateBytes(entry: ModelEntry): Promise<number | ModelEstimate>;
    clock?: Clock;
    /** The process' resident memory, measured around loads and unloads for the log. */
    residentBytes?: () => number;
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
    private readonly budget: MemoryBudget;
    private readonly slotContext: SlotContext;
    private disposed = false;
    private preloading = false;
    private readonly loadSecondsById = new Map<string, number>();
    /** Loads by model and result (`ok`, `failed`), and evictions by model and reason, for /metrics. */
    readonly loadCounts = new Map<string, {ok: number, failed: number}>();
    readonly evictionCounts = new Map<string, Map<EvictionReason, number>>();
    private readonly loadListeners: ((id: string, seconds: number) => void)[] = [];

    constructor(readonly registry: ModelRegistry, tasks: readonly HostedTask[], private readonly logger: Logger, readonly options: LibraryOptions) {
        this.tasks = new Map(tasks.map((task) => [task.task, task]));
        this.clock = options.clock ?? systemClock;
        this.budget = new MemoryBudget(options.memoryBudget, options.vramBudget ?? 0, () => this.slots.values(), this.clock, options.memoryWaitMs);
        this.slotContext = {
            clock: this.clock, logger, budget: this.budget,
            residentBytes: options.residentBytes ?? (() => process.memoryUsage.rss()),
            estimateBytes: (entry) => options.estimateBytes(entry),
            createEngine: (entry, onLoadProgress, estimate) => this.tasks.get(entry.task)!.createEngine(entry, onLoadProgress, estimate),
            memoryHint: (entry) => this.tasks.get(entry.task)?.memoryHint?.(entry),
            disposed: () => this.disposed,
            loadEnded: (id, result, seconds) => this.countLoad(id, result, seconds),
            unloaded: (id, reason) => {
                const byReason = this.evictionCounts.get(id) ?? new Map<EvictionReason, number>();
                byReason.set(reason, (byReason.get(reason) ?? 0) + 1);
                this.evictionCounts.set(id, byReason);
            }
        };
        this.addSlots(registry.entries);
    }

    get state(): HostState {
        if (this.disposed)
            return "disposed";
        if (this.preloading)
            return "loading";
        // (A failed preloaded model's retry loading it is not ready yet: the readiness would blink 200 for the whole load.)
        return [...this.slots.values()].some((slot) => slot.preloadFailed) ? "failed" : "ready";
    }

    /** The RAM budget. */
    get memoryBudget() {
        return this.budget.ramBytes;
    }

    /** The VRAM budget; null while not known (`auto`: learnt once a GGUF model is estimated or needs VRAM; 0 on the CPU). */
    get vramBudget() {
        return this.budget.vramBudget;
    }

    /** Learns the VRAM budget (`--vram-budget auto`) now, once asking the GPU runtime costs nothing more (MemoryBudget.learnVram). */
    learnVramBudget(): Promise<void> {
        return this.budget.learnVram();
    }

    /** Bytes of the budget held by models loaded, loading or being unloaded, per device. */
    memoryInUse(): MemoryEstimate {
        return this.budget.inUse();
    }

    /** Per model holding memory: the bytes of the budget it holds (its estimate), per device. */
    memoryByModel(): ReadonlyMap<string, MemoryEstimate> {
        return this.budget.byModel();
    }

    /**
     * Loads the preloaded models (manifest `preload`, or all with `--preload-all`), one after another in manifest
     * order, none evicting another to make room (one that finds none fails, and is tried again on its backoff). Resolves
     * when all are loaded; rejects with the first failure once all were tried (the others still serve). Preloaded models
     * that do not fit the budget together are said once, with their estimates.
     */
    async preload(): Promise<void> {
        this.preloading = true;
        let firstError: unknown;
        const estimates = new Map<string, MemoryEstimate>();
        try {
            for (const slot of this.slots.values()) {
                if (!slot.preload || this.disposed)
                    continue;
                try {
                    await slot.ensureLoaded({byPreload: true});
                } catch (error) {
                    firstError ??= error;
                }
                if (slot.estimated != null && slot.failure?.error.permanent !== true)
                    estimates.set(slot.entry.id, slot.estimated);
                // No keep-alive timer yet: a preloaded model's keep-alive counts from its first use (it is there to be warm).
            }
        } finally {
            this.preloading = false;
        }
        for (const warning of preloadOverBudget(estimates, {ram: this.budget.ramBytes, vram: this.budget.vramBudget}))
            this.logger.warn(warning);
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

    /** Calls `listener` after every successful load with its seconds (the /metrics histogram). */
    onLoad(listener: (id: string, seconds: number) => void) {
        this.loadListeners.push(listener);
    }

    /** Per model: its state, memory, last use, keep-alive (for /v1/models and /metrics). */
    statusOf(entry: ModelEntry): ModelStatus {
        return this.slots.get(entry.id)!.status();
    }

    endpointsOf(entry: ModelEntry): readonly string[] {
        return this.tasks.get(entry.task)?.endpoints ?? [];
    }

    /** What the model takes in and gives out (a chat model that sees takes `image`), or null when its task does not say. */
    modalitiesOf(entry: ModelEntry): Modalities | null {
        return this.tasks.get(entry.task)?.modalities?.(entry) ?? null;
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
        slot.stopTimer();
        try {
            const engine = await this.loaded(slot, lease?.signal);
            slot.lastUsed = this.clock.now();
            if (lease != null) {
                slot.hold();
                lease.hold(() => slot.release());
            }
            return {entry, engine: engine as E};
        } finally {
            slot.waiting--;
            slot.settle();
        }
    }

    /**
     * The engine of the model a request names if it is loaded now, else null (an unknown name, a model of another task,
     * one not loaded): nothing is loaded, held or counted as a use. For a check that needs a loaded model's facts
     * before the request is read in full (earlyPromptFloor); the request then resolves its model as usual.
     */
    loadedEngine<E extends Engine>(name: string, task: string): {entry: ModelEntry, engine: E} | null {
        const entry = this.registry.resolve(name);
        const slot = entry == null || entry.task !== task ? undefined : this.slots.get(entry.id);
        return slot?.state === "loaded" ? {entry: entry!, engine: slot.engine as E} : null;
    }

    /** Registers models added while the server runs (pulled from the hub; see ModelRegistry.add); returns those registered. */
    register(entries: readonly ModelEntry[]): ModelEntry[] {
        const added = this.registry.add(entries);
        this.addSlots(added);
        return added;
    }

    /**
     * An administrator's load (the management API): the model named, loaded now, as a request would load it (the
     * memory budget evicts idle models or waits), except that a failed model is tried again at once. `signal`: the
     * administrator went away (the load goes on).
     */
    async loadModel(name: string, signal?: AbortSignal): Promise<ModelEntry> {
        const entry = this.resolveForAdmin(name);
        const slot = this.slots.get(entry.id)!;
        slot.waiting++;
        slot.stopTimer();
        try {
            await this.loaded(slot, signal, true);
            slot.lastUsed = this.clock.now();
        } finally {
            slot.waiting--;
            slot.settle();
        }
        return entry;
    }

    /**
     * An administrator's unload: an idle model is unloaded, and its memory is back when this resolves; one that is
     * not loaded is left as it is. A model loading, or serving or awaited by requests, is not taken from them: 409.
     */
    async unloadModel(name: string): Promise<ModelEntry> {
        const entry = this.resolveForAdmin(name);
        const slot = this.slots.get(entry.id)!;
        if (slot.state === "unloading")
            await slot.unloading;
        else if (slot.state === "loading")
            throw modelInUse(entry.id, "is loading");
        else if (slot.state === "loaded") {
            if (!slot.idle()) {
                const requests = slot.requests();
                throw modelInUse(entry.id, `is in use by ${requests} request${requests === 1 ? "" : "s"} (running or waiting)`);
            }
            await slot.unload("admin");
        }
        return entry;
    }

    async dispose() {
        this.disposed = true;
        this.budget.notifyChange();
        const slots = [...this.slots.values()];
        for (const slot of slots)
            slot.stopTimers();
        // A load under way finishes first (waiting for memory, it stops at once): its engine is then disposed by the load itself.
        await Promise.allSettled(slots.map((slot) => slot.loading));
        await Promise.allSettled(slots.map((slot) => slot.state === "loaded" ? slot.unload("shutdown") : slot.unloading));
    }

    private resolveForAdmin(name: string): ModelEntry {
        const entry = this.registry.resolve(name);
        if (entry == null)
            throw ApiError.modelNotFound(name, this.registry.names);
        return entry;
    }

    private addSlots(entries: readonly ModelEntry[]) {
        for (const entry of entries)
            this.slots.set(entry.id, new ModelSlot(entry, entry.preload ?? this.options.preloadAll, keepAliveOf(entry, this.options), entry.pin ?? false, this.slotContext));
    }

    /** The slot's engine (see ModelSlot.ensureLoaded), a load failure as the 503 (or 4xx) a client gets. */
    private async loaded(slot: ModelSlot, signal?: AbortSignal, retryNow = false): Promise<Engine> {
        try {
            return await slot.ensureLoaded({signal, retryNow});
        } catch (error) {
            if (error instanceof ModelLoadError && error.permanent)
                throw error.cause;
            if (error instanceof ModelLoadError)
                throw modelLoadFailed(error.message, Math.max(1, Math.ceil((slot.failure!.retryAt - this.clock.now()) / 1000)));
            throw error;
        }
    }

    private countLoad(id: string, result: "ok" | "failed", seconds?: number) {
        const counts = this.loadCounts.get(id) ?? {ok: 0, failed: 0};
        counts[result]++;
        this.loadCounts.set(id, counts);
        if (seconds != null) {
            this.loadSecondsById.set(id, seconds);
            for (const listener of this.loadListeners)
                listener(id, seconds);
        }
    }
}

/**
 * A model's keep-alive: its manifest entry's; else the server's `--keep-alive`, when given; else, for a preloaded model,
 * forever (it was loaded at start to be warm); else 5 minutes.
 */
function keepAliveOf(entry: ModelEntry, options: LibraryOptions): number | null {
    if (entry.keepAliveMs !== undefined)
        return entry.keepAliveMs;
    if (options.keepAliveMs !== undefined)
        return options.keepAliveMs;
    return entry.preload ?? options.preloadAll ? null : defaultKeepAliveMs;
}
