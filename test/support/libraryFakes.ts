import type { ChatEngine } from "../../src/capabilities/chat/ChatEngine.js";
import type { MemoryEstimate } from "../../src/core/engines/MemoryEstimate.js";
import type { ModelEntry } from "../../src/core/registry/ModelEntry.js";
import { FakeChatEngine } from "./FakeChatEngine.js";
import type { ManualClock } from "./ManualClock.js";
import { startTestServer, type TestServer } from "./startTestServer.js";
import { tinyChatModelPath } from "./testModels.js";

/** A gate a test opens by hand. */
export function gate() {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => open = resolve);
    return {opened, open};
}

/**
 * Fake chat models whose loads and disposals are recorded, each load held at `loadGate` when one is set (having
 * reported the fractions of `loadProgress` for that model first, as node-llama-cpp's `onLoadProgress` would),
 * each generation (after its first piece) at `pieceGate` when one is set for that model.
 */
export function library() {
    const created: string[] = [];
    const disposed: string[] = [];
    const loadGates = new Map<string, Promise<void>>();
    const pieceGates = new Map<string, Promise<void>>();
    const failures = new Map<string, Error>();
    const loadProgress = new Map<string, number[]>();
    const loadStarted = new Map<string, ReturnType<typeof gate>>();
    const startedLoading = (id: string) => {
        const started = loadStarted.get(id) ?? gate();
        loadStarted.set(id, started);
        return started;
    };
    const factory = async (entry: ModelEntry, onLoadProgress?: (fraction: number) => void): Promise<ChatEngine> => {
        created.push(entry.id);
        for (const fraction of loadProgress.get(entry.id) ?? [])
            onLoadProgress?.(fraction);
        startedLoading(entry.id).open();
        await loadGates.get(entry.id);
        const failure = failures.get(entry.id);
        if (failure != null)
            throw failure;
        const engine = new FakeChatEngine(entry.id, {
            pieces: ["hello", " there"],
            beforePiece: (index) => index === 0 ? Promise.resolve() : pieceGates.get(entry.id) ?? Promise.resolve()
        });
        engine.dispose = async () => void disposed.push(entry.id);
        return engine;
    };
    return {created, disposed, loadGates, pieceGates, failures, loadProgress, factory, loadStarted: (id: string) => startedLoading(id).opened};
}

export const mb = 1024 ** 2;

/** A manifest entry of a fake chat model (the file is only read for its name). */
export const libraryModel = (id: string, extra: Record<string, unknown> = {}) => ({id, task: "chat", path: tinyChatModelPath, ...extra});

export type LibraryServerOptions = {
    models: Record<string, unknown>[];
    /** Bytes each model is estimated to take, by id (default 100 MB; a number is all RAM, else per device); the budget (default 1 GB). */
    estimates?: Record<string, number | MemoryEstimate>;
    budget?: number;
    config?: Record<string, unknown>;
    clock?: ManualClock;
};

/** A server of `fakes`' models, none preloaded, no keep-alive unless `config` says, waiting for memory at most 30 s. */
export function startLibraryServer(fakes: ReturnType<typeof library>, options: LibraryServerOptions): Promise<TestServer> {
    return startTestServer({
        models: options.models,
        config: {preloadAll: false, memoryBudget: options.budget ?? 1024 * mb, keepAliveSeconds: null, memoryWaitSeconds: 30, ...options.config},
        factories: {chat: fakes.factory},
        estimateBytes: async (entry) => options.estimates?.[entry.id] ?? 100 * mb,
        clock: options.clock
    });
}
