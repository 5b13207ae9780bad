import type { Logger } from "../../logger.js";
import { ApiError } from "../http/ApiError.js";
import type { ModelEntry } from "../registry/ModelEntry.js";
import type { ModelRegistry } from "../registry/ModelRegistry.js";
import type { Engine } from "./Engine.js";
import { ModelLoadError } from "./ModelLoadError.js";

/** Loads the engine of one manifest entry. Injectable, so tests run the HTTP layer against fakes. */
export type EngineFactory = (entry: ModelEntry) => Promise<Engine>;

/** A task the host serves: its endpoints (for messages and /v1/models) and how its engines are made. */
export type HostedTask = {task: string, endpoints: readonly string[], createEngine: EngineFactory};

export type HostState = "loading" | "ready" | "failed" | "disposed";

/**
 * Owns every loaded engine, whatever its task: loads them at startup, finds the one a request names,
 * reports their load, and disposes them at shutdown (each engine drains its own requests first).
 */
export class EngineHost {
    private readonly engines = new Map<string, Engine>();
    private readonly tasks: ReadonlyMap<string, HostedTask>;
    private stateValue: HostState = "loading";
    private readonly loadSecondsById = new Map<string, number>();

    constructor(readonly registry: ModelRegistry, tasks: readonly HostedTask[], private readonly logger: Logger) {
        this.tasks = new Map(tasks.map((task) => [task.task, task]));
    }

    get state() {
        return this.stateValue;
    }

    /** Loads every model, one after another, in manifest order. */
    async loadAll(): Promise<void> {
        try {
            for (const entry of this.registry.entries) {
                const started = performance.now();
                let engine: Engine;
                try {
                    engine = await this.tasks.get(entry.task)!.createEngine(entry);
                } catch (error) {
                    throw new ModelLoadError(entry, error);
                }
                this.loadSecondsById.set(entry.id, (performance.now() - started) / 1000);
                if (this.stateValue === "disposed") {
                    await engine.dispose();
                    return;
                }
                this.engines.set(entry.id, engine);
                this.logger.info(`Loaded '${entry.id}'`, {ms: Math.round(performance.now() - started), ...engine.describe?.()});
            }
            this.stateValue = "ready";
        } catch (error) {
            this.stateValue = "failed";
            throw error;
        }
    }

    /** Per loaded model: how busy it is (reported by /health). */
    loads() {
        return Object.fromEntries([...this.engines].map(([id, engine]) => [id, engine.load()]));
    }

    /** Per loaded model: how long loading it took, in seconds (for /metrics). */
    loadSeconds(): ReadonlyMap<string, number> {
        return this.loadSecondsById;
    }

    endpointsOf(entry: ModelEntry): readonly string[] {
        return this.tasks.get(entry.task)?.endpoints ?? [];
    }

    /**
     * The model a request names (id, alias or `<family>-latest`) and its engine, for an endpoint of
     * `task`: 404 for an unknown name, 400 for a model of another task, 503 while it is loading.
     */
    engineFor<E extends Engine>(name: string, task: string): {entry: ModelEntry, engine: E} {
        const entry = this.registry.resolve(name);
        if (entry == null)
            throw ApiError.modelNotFound(name, this.registry.names);
        if (entry.task !== task)
            throw ApiError.invalidRequest(
                `The model '${entry.id}' is a${/^[aeiou]/.test(entry.task) ? "n" : ""} ${entry.task} model; it serves ${this.endpointsOf(entry).join(", ")}, not ${this.tasks.get(task)?.endpoints.join(", ")}.`,
                "model", "model_not_supported");
        const engine = this.engines.get(entry.id);
        if (engine == null)
            throw ApiError.unavailable(`Model '${entry.id}' is still loading.`, 5);
        return {entry, engine: engine as E};
    }

    async dispose() {
        this.stateValue = "disposed";
        const engines = [...this.engines.values()];
        this.engines.clear();
        await Promise.allSettled(engines.map((engine) => engine.dispose()));
    }
}
