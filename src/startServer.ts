import http from "node:http";
import type { AddressInfo } from "node:net";
import { ApiKeyStore } from "./auth/ApiKeyStore.js";
import type { Config } from "./config.js";
import { EngineHost, type EngineFactories } from "./core/engines/EngineHost.js";
import type { Logger } from "./logger.js";
import { loadManifest } from "./registry/loadManifest.js";
import { ModelRegistry } from "./registry/ModelRegistry.js";
import { createApp } from "./server/createApp.js";
import { isLoopbackHost } from "./server/isLoopbackHost.js";

export class StartupError extends Error {
    constructor(message: string) {
        super(message);
        this.name = "StartupError";
    }
}

export type RunningServer = {
    url: string;
    registry: ModelRegistry;
    engines: EngineHost;
    keys: ApiKeyStore;
    /** Resolves when every model is loaded; rejects when one fails to load. */
    ready: Promise<void>;
    /** Stop accepting, let in-flight requests finish (aborting them after the timeout), dispose models. */
    close(): Promise<void>;
};

/**
 * The real engines; tests may pass fakes instead. node-llama-cpp is imported on first use, so a
 * configuration error is reported without waiting for the native bindings to load.
 */
export function llamaEngineFactories(config: Config): EngineFactories {
    // One worker pool for every ONNX embeddings model, created with the first one.
    let onnxPool: import("./capabilities/embeddings/onnx/OnnxWorkerPool.js").OnnxWorkerPool | undefined;
    return {
        embeddings: async (entry) => {
            const settings = entry.embedding!;
            if (entry.path.toLowerCase().endsWith(".gguf")) {
                const {LlamaEmbeddingsEngine} = await import("./capabilities/embeddings/llama/LlamaEmbeddingsEngine.js");
                const {loadLlamaRuntime} = await import("./runtimes/llama/llamaRuntime.js");
                return LlamaEmbeddingsEngine.load(await loadLlamaRuntime(), {
                    id: entry.id, modelPath: entry.path, maxInputTokens: settings.maxInputTokens,
                    matryoshka: settings.matryoshka, normalize: settings.normalize,
                    threads: entry.threads ?? config.threads, queueSize: config.queueSize
                });
            }
            const {OnnxWorkerPool} = await import("./capabilities/embeddings/onnx/OnnxWorkerPool.js");
            const {OnnxEmbeddingsEngine} = await import("./capabilities/embeddings/onnx/OnnxEmbeddingsEngine.js");
            const {onnxModelSpec} = await import("./capabilities/embeddings/onnx/onnxModelSpec.js");
            const spec = onnxModelSpec(entry.id, entry.path, settings, entry.threads ?? config.onnxThreads);
            if (onnxPool == null || onnxPool.closed)
                onnxPool = new OnnxWorkerPool({workers: config.embedWorkers});
            return OnnxEmbeddingsEngine.load(onnxPool, entry.id, {
                spec, maxInputTokens: settings.maxInputTokens, matryoshka: settings.matryoshka,
                normalize: settings.normalize, queueSize: config.queueSize
            });
        },
        chat: async (entry) => {
            const {LlamaChatEngine} = await import("./capabilities/chat/llama/LlamaChatEngine.js");
            const {loadLlamaRuntime} = await import("./runtimes/llama/llamaRuntime.js");
            return LlamaChatEngine.load(await loadLlamaRuntime(), {
                id: entry.id,
                modelPath: entry.path,
                contextSize: entry.contextSize,
                threads: entry.threads ?? config.threads,
                parallel: entry.parallel ?? config.parallel,
                queueSize: config.queueSize
            });
        }
    };
}

/**
 * Validates everything that can be checked without loading a model (manifest, keys, bind policy),
 * starts listening (so /health answers 503 while models load) and loads the models.
 */
export async function startServer(config: Config, logger: Logger, factories: EngineFactories = llamaEngineFactories(config)): Promise<RunningServer> {
    const registry = new ModelRegistry(loadManifest(config.modelsConfig));
    let keys: ApiKeyStore;
    try {
        keys = new ApiKeyStore({plainKeys: config.apiKeys, keysFile: config.apiKeysFile, onWarning: (message) => logger.warn(message)});
    } catch (error) {
        throw new StartupError((error as Error).message);
    }
    if (!keys.enabled && !isLoopbackHost(config.host))
        throw new StartupError(
            `Refusing to listen on ${config.host} without API keys: anyone on the network could use the server. ` +
            "Add a key with `npm run keys -- add <name>` or set API_KEYS, or bind to 127.0.0.1.");

    const engines = new EngineHost(registry, factories, logger);
    const shutdown = new AbortController();
    const app = createApp({
        registry, engines, keys, logger,
        bodyLimit: config.bodyLimit,
        ssePingMs: config.ssePingMs,
        shutdownSignal: shutdown.signal
    });
    const server = http.createServer(app.callback());
    // Generation can take minutes; Node's default 5-minute request timeout would cut it.
    server.requestTimeout = 0;
    await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(config.port, config.host, () => {
            server.off("error", reject);
            resolve();
        });
    });
    const address = server.address() as AddressInfo;
    const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
    const url = `http://${host}:${address.port}`;

    const ready = engines.loadAll();
    ready.catch(() => {});

    let closing: Promise<void> | undefined;
    const close = () => closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // Keep-alive connections become idle as their last request finishes.
        const idleSweep = setInterval(() => server.closeIdleConnections(), 100);
        server.closeIdleConnections();
        const timeout = setTimeout(() => {
            logger.warn("Shutdown timeout: aborting in-flight requests");
            shutdown.abort(new Error("Server shutting down"));
            setTimeout(() => server.closeAllConnections(), 1000).unref();
        }, config.shutdownTimeoutMs);
        await closed;
        clearTimeout(timeout);
        clearInterval(idleSweep);
        shutdown.abort(new Error("Server shut down"));
        await ready.catch(() => {});
        await engines.dispose();
    })();

    return {url, registry, engines, keys, ready, close};
}
