import { PlaygroundFiles } from "./server/playground/PlaygroundFiles.js";
import { uiEnabled } from "./server/playground/uiEnabled.js";
import { projectRoot } from "./projectRoot.js";
import http from "node:http";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { ApiKeyStore } from "./auth/ApiKeyStore.js";
import type { Capability, EngineContext } from "./capabilities/Capability.js";
import { loadCapabilities } from "./capabilities/capabilities.js";
import { loadServedManifest, settingsOf } from "./capabilities/loadServedManifest.js";
import { manifestFromPaths } from "./capabilities/manifestFromPaths.js";
import { parseManifest } from "./core/registry/loadManifest.js";
import { loadHubConfig, type Config, type HubConfig } from "./config.js";
import type { CatalogueEntry } from "./download/CatalogueEntry.js";
import { loadCatalogue } from "./download/loadCatalogue.js";
import { planPull } from "./download/pullModel.js";
import type { Clock } from "./core/engines/Clock.js";
import { EngineHost, type EngineFactory } from "./core/engines/EngineHost.js";
import type { ModelEntry } from "./core/registry/ModelEntry.js";
import type { MemoryEstimate } from "./core/engines/MemoryEstimate.js";
import { estimateModelBytes } from "./runtimes/estimateModelBytes.js";
import { gpuVramBudget } from "./runtimes/llama/gpuVramBudget.js";
import { BodyMemory } from "./core/http/BodyMemory.js";
import { ModelRegistry } from "./core/registry/ModelRegistry.js";
import { ServerShutdownError } from "./core/http/ServerShutdownError.js";
import { WorkerPool } from "./core/workers/WorkerPool.js";
import { RunFolder } from "./core/files/RunFolder.js";
import { removeOnnxRuntimeDebugLog } from "./runtimes/onnx/removeOnnxRuntimeDebugLog.js";
import type { Logger } from "./logger.js";
import { createApp } from "./server/createApp.js";
import { closeIdleGracefully, servedUnlessEnded } from "./server/closeIdleGracefully.js";
import type { RouteInfo } from "./server/routeTableOf.js";
import { isLoopbackHost } from "./server/isLoopbackHost.js";
import { ServerMetrics } from "./server/metrics/ServerMetrics.js";
import { watchBodyIdle } from "./server/watchBodyIdle.js";
import { watchWriteStall } from "./server/watchWriteStall.js";

export class StartupError extends Error {
    constructor(message: string) {
        super(message);
        this.name = "StartupError";
    }
}

/** Per task, an engine factory used instead of the capability's own (tests: fake engines). */
export type EngineFactories = Readonly<Partial<Record<string, EngineFactory>>>;

export type ServerOptions = {
    /** What the server does; default: every capability of `capabilityList.ts`. */
    capabilities?: readonly Capability[];
    factories?: EngineFactories;
    /** Bytes a model will take once loaded, per device (a number: all RAM); default: estimateModelBytes (tests: fixed figures for fake engines). */
    estimateBytes?: (entry: ModelEntry) => Promise<number | MemoryEstimate>;
    /** The model library's time (keep-alive, load backoff, the wait for memory); tests move it by hand. */
    clock?: Clock;
    /** Where POST /models/pull fetches from; default: HF_ENDPOINT and HF_TOKEN, read at each pull (tests: a loopback hub). */
    hub?: HubConfig;
    /** The catalogue POST /models/pull names resolve in; default: scripts/download-models/catalogue.json. */
    catalogue?: () => CatalogueEntry[];
    /** The downloader's wait before resuming a cut download (tests: 0). */
    pullRetryDelayMs?: number;
};

export type RunningServer = {
    url: string;
    registry: ModelRegistry;
    engines: EngineHost;
    keys: ApiKeyStore;
    /** Every route the server answers, and whether it is public. */
    routes: readonly RouteInfo[];
    /** How many client connections are open now. */
    openConnections(): Promise<number>;
    /** Resolves when the preloaded models (manifest `preload`, `--preload-all`) are loaded; rejects with the first that failed (the others still serve). */
    ready: Promise<void>;
    /** /health/ready turns 503, --drain-seconds later stop accepting, let in-flight requests finish (aborting them after the timeout), dispose models, close the worker pool. */
    close(): Promise<void>;
};

/**
 * Validates everything that can be checked without loading a model (manifest, keys, bind policy),
 * registers the models (loaded when first asked for), starts listening and loads the preloaded ones
 * (/health/ready answers 503 while they load).
 */
export async function startServer(config: Config, logger: Logger, options: ServerOptions = {}): Promise<RunningServer> {
    const capabilities = options.capabilities ?? await loadCapabilities();
    const registry = new ModelRegistry(config.modelPaths.length > 0
        ? await modelsOfPaths(config.modelPaths, capabilities, logger)
        : loadServedManifest(config.modelsConfig, capabilities));
    let keys: ApiKeyStore;
    try {
        keys = new ApiKeyStore({
            plainKeys: config.apiKeys, keysFile: config.apiKeysFile,
            onWarning: (message) => logger.warn(message), onNotice: (message) => logger.warn(message)
        });
    } catch (error) {
        throw new StartupError((error as Error).message);
    }
    if (!keys.enabled && !isLoopbackHost(config.host))
        throw new StartupError(
            `Refusing to listen on ${config.host} without API keys: anyone on the network could use the server. ` +
            "Add a key with `npm run keys -- add <name>` or set API_KEYS, or bind to 127.0.0.1.");

    // One worker pool for every capability's ONNX tasks, started when the first model needs it.
    let workers: WorkerPool | null = null;
    const drain = new AbortController();
    const runFolder = await RunFolder.open(config.cacheDir);
    const engineContext: EngineContext = {
        config, logger,
        workers: () => workers ??= new WorkerPool({workers: config.workers}),
        runFiles: {folder: runFolder, closing: drain.signal},
        registry
    };
    const engines = new EngineHost(registry, capabilities.map((capability) => ({
        task: capability.task,
        endpoints: capability.endpoints,
        modalities: capability.modalities,
        memoryHint: capability.memoryHint,
        createEngine: options.factories?.[capability.task] ?? ((entry, onLoadProgress, estimate) => capability.createEngine(entry, {...engineContext, onLoadProgress, estimate}))
    })), logger, {
        memoryBudget: config.memoryBudget,
        // Without a GPU the VRAM budget is 0 (every estimate is RAM); `auto` asks the runtime once a GGUF model is estimated or needs VRAM.
        vramBudget: config.vramBudget !== "auto" ? config.vramBudget : config.gpu === "off" ? 0 : () => gpuVramBudget(config),
        // null (forever) and undefined (not given) as they are.
        keepAliveMs: config.keepAliveSeconds == null ? config.keepAliveSeconds : config.keepAliveSeconds * 1000,
        preloadAll: config.preloadAll,
        memoryWaitMs: config.memoryWaitSeconds * 1000,
        estimateBytes: options.estimateBytes ?? (async (entry) => {
            const ggufContext = capabilities.find((capability) => capability.task === entry.task)?.ggufContext;
            // A context fitted to the budget (a chat model given no size) fits beside the models loaded that are not evicted for it.
            const kept = keptBytes(entry);
            const vramBudget = kept.vram === 0 ? config.vramBudget
                : Math.max(0, (config.vramBudget === "auto" ? await gpuVramBudget(config) : config.vramBudget) - kept.vram);
            const settings = {...config, memoryBudget: Math.max(0, config.memoryBudget - kept.ram), vramBudget};
            const estimate = await estimateModelBytes(entry, settings, ggufContext == null ? undefined : (model, trained) => ggufContext(model, settings, trained));
            // A GGUF model's estimate loaded the llama.cpp runtime: whether it has a GPU is known now, and so `--vram-budget
            // auto` (0 on the CPU), where only a model needing VRAM would have asked.
            if (entry.path.toLowerCase().endsWith(".gguf"))
                await engines.learnVramBudget();
            return estimate;
        }),
        clock: options.clock
    });

    /**
     * What the models loaded (or loading) that are never evicted for `entry` hold of the budgets now: the pinned ones,
     * and for a preloaded model the other preloaded ones (the preload evicts none for another); `entry` aside, and one
     * being unloaded (it is leaving).
     */
    function keptBytes(entry: ModelEntry): {ram: number, vram: number} {
        const bytes = {ram: 0, vram: 0};
        const preloaded = engines.statusOf(entry).preload;
        for (const [holder, held] of engines.memoryByModel()) {
            const status = holder === entry.id ? null : engines.statusOf(registry.resolve(holder)!);
            if (status != null && status.value !== "unloading" && (status.pinned || (preloaded && status.preload))) {
                bytes.ram += held.ram;
                bytes.vram += held.vram;
            }
        }
        return bytes;
    }

    const shutdown = new AbortController();
    const bodyMemory = new BodyMemory(config.maxBodyMemory);
    const app = createApp({
        config, capabilities, engines, keys, logger,
        metrics: new ServerMetrics(engines, bodyMemory),
        corsOrigins: config.corsOrigins,
        allowedHosts: config.allowedHosts,
        metricsPublic: config.metricsPublic,
        healthDetails: config.healthDetails,
        publicUrl: config.publicUrl,
        serverUrl: () => url,
        bodyLimit: config.bodyLimit,
        bodyMemory,
        ssePingMs: config.ssePingMs,
        shutdownSignal: shutdown.signal,
        drainSignal: drain.signal,
        queueSize: config.queueSize,
        playground: uiEnabled(config.ui, config.host, keys.state !== "open") ? PlaygroundFiles.load(path.join(projectRoot, "playground")) : null,
        // Pulled models go where `npm run download-models` puts them: the manifest's folder, added to the manifest.
        pullModels: (request) => planPull(request, {
            manifestPath: config.modelsConfig, hub: options.hub ?? loadHubConfig(), catalogue: options.catalogue ?? (() => loadCatalogue()),
            capabilities, retryDelayMs: options.pullRetryDelayMs, stop: shutdown.signal
        })
    });
    // Slow clients: headers must arrive within headersTimeout, a body must keep moving (watchBodyIdle), and
    // the whole request (not the response: a generation may take minutes) within requestTimeout.
    // Node checks the first two on a timer; checking often keeps short test timeouts meaningful.
    const server = http.createServer({connectionsCheckingInterval: Math.max(50, Math.min(1000, config.headersTimeoutMs / 4))},
        servedUnlessEnded(app.koa.callback()));
    server.headersTimeout = config.headersTimeoutMs;
    server.requestTimeout = config.requestTimeoutMs;
    server.keepAliveTimeout = config.keepAliveTimeoutMs;
    // Slow readers: a response the client stops taking is cut after writeTimeoutMs; connections are capped.
    server.maxConnections = config.maxConnections;
    // `Expect: 100-continue`: the app decides (continueBody sends the 100 once the request passed every check before its
    // body), not Node, which would invite every body at once.
    server.on("checkContinue", (request, response) => server.emit("request", request, response));
    closeIdleGracefully(server);
    server.on("request", (request, response) => {
        // Each response carries a fixed set of 'close' listeners (these two watches, the request context, the body's
        // memory hold, a shared drain wait), and a streamed body's pipeline (koa's respond) adds its own: 11 with a
        // Readable body, past Node's default of 10 (a MaxListenersExceededWarning for what is not a leak).
        response.setMaxListeners(20);
        watchBodyIdle(request, response, config.bodyTimeoutMs);
        watchWriteStall(response, config.writeTimeoutMs);
    });
    await new Promise<void>((resolve, reject) => {
        const failed = (error: NodeJS.ErrnoException) => reject(error.code === "EADDRINUSE"
            ? new StartupError(`Port ${config.port} on ${config.host} is already in use (another server?): stop it, or choose another port with --port (or PORT), e.g. --port ${config.port + 1}.`)
            : error.code === "EADDRNOTAVAIL" || error.code === "ENOTFOUND"
                ? new StartupError(`Cannot listen on ${config.host}: this machine has no such address (--host / HOST).`)
                : error);
        server.once("error", failed);
        server.listen(config.port, config.host, () => {
            server.off("error", failed);
            resolve();
        });
    });
    const address = server.address() as AddressInfo;
    const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
    const url = `http://${host}:${address.port}`;

    // A key added or revoked is logged when it happens, not at the next request.
    const keysWatch = setInterval(() => keys.check(), 1000);
    keysWatch.unref();

    const ready = engines.preload();
    ready.catch(() => {});

    let closing: Promise<void> | undefined;
    const close = () => closing ??= (async () => {
        // Draining: /health/ready says 503 at once while everything is still served, so balancers
        // stop sending work before the port closes (--drain-seconds: longer than their check interval x fall).
        drain.abort();
        if (config.drainSeconds > 0) {
            logger.info(`Draining: /health/ready answers 503; closing the port in ${config.drainSeconds} s`);
            await new Promise((resolve) => setTimeout(resolve, config.drainSeconds * 1000));
        }
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // Keep-alive connections become idle as their last request finishes.
        const idleSweep = setInterval(() => server.closeIdleConnections(), 100);
        server.closeIdleConnections();
        // The grace is over: every request still running is aborted with ServerShutdownError, each stream ending with
        // its format's terminal error (streamResponse), each request not yet answered with a 503; a second later the
        // connections that are still open (a client that stopped reading) are cut.
        const timeout = setTimeout(() => {
            logger.warn(`Shutdown timeout (${config.shutdownTimeoutMs} ms): aborting in-flight requests; their streams end with a shutdown error`);
            shutdown.abort(new ServerShutdownError(config.shutdownTimeoutMs));
            setTimeout(() => server.closeAllConnections(), 1000).unref();
        }, config.shutdownTimeoutMs);
        await closed;
        clearTimeout(timeout);
        clearInterval(idleSweep);
        clearInterval(keysWatch);
        shutdown.abort(new ServerShutdownError(config.shutdownTimeoutMs));
        await ready.catch(() => {});
        await engines.dispose();
        await runFolder.remove();
        // Engines have drained their requests, so no task is running: closing cannot cut ONNX Runtime short.
        await (workers as WorkerPool | null)?.close();
        if (workers != null)
            removeOnnxRuntimeDebugLog();
    })();

    const openConnections = () => new Promise<number>((resolve, reject) => server.getConnections((error, count) => error != null ? reject(error) : resolve(count)));
    return {url, registry, engines, keys, routes: app.routes, openConnections, ready, close};
}

/**
 * The manifest of the model files and folders given on the command line; what a folder held but is not served is logged,
 * and so is each model served under another name than its own, with its file.
 */
async function modelsOfPaths(paths: readonly string[], capabilities: readonly Capability[], logger: Logger) {
    const {models, skipped, renamed} = manifestFromPaths(paths, capabilities);
    for (const entry of skipped)
        logger.warn(`Not serving ${entry.path}: ${entry.reason}`);
    for (const entry of renamed)
        logger.info(`Serving ${entry.path} as '${entry.id}' ('${entry.name}' is ${entry.holder})`);
    logger.info(`${models.length} model${models.length === 1 ? "" : "s"} found (loaded when first asked for, or at start with preload)`);
    return parseManifest({models}, {commandLine: true}, settingsOf(capabilities));
}
