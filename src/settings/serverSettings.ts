import os from "node:os";
import path from "node:path";
import { keepAlive } from "./keepAlive.js";
import { ConfigError, type Setting } from "./Setting.js";
import { byteSize, httpUrl, integer, integerFrom, list, oneOf, onOff, parseByteSize, text } from "./settingKinds.js";

export const logLevels = ["silent", "error", "warn", "info", "debug"] as const;
export type LogLevel = typeof logLevels[number];
export const healthDetailsSettings = ["auto", "public", "private"] as const;
export type HealthDetailsSetting = typeof healthDetailsSettings[number];
export const llamaBuildSettings = ["auto", "native", "prebuilt"] as const;
export type LlamaBuildSetting = typeof llamaBuildSettings[number];
export const gpuSettings = ["auto", "cuda", "vulkan", "metal", "off"] as const;
export type GpuSetting = typeof gpuSettings[number];

/** More layers than any model has. */
const maxGpuLayers = 10_000;
/** Longest a timeout may be set to: an hour. */
const hourMs = 3_600_000;

/**
 * The settings of the server itself (HTTP, auth, limits, the runtimes); each capability adds its own
 * (its manifest part's `settings`), and src/config.ts reads them all.
 */
export const serverSettings = {
    host: text({
        flag: "host", env: "HOST", arg: "<addr>", default: "127.0.0.1",
        // `[::1]` as in a URL is accepted: the brackets are not part of the address.
        parse: (raw) => raw.replace(/^\[(.*)\]$/, "$1"),
        help: "address to bind"
    }),
    port: integer({flag: "port", env: "PORT", arg: "<n>", default: 8080, min: 0, max: 65535, help: "port (0 = any free port)", docs: "port (`0` = any free port)"}),
    modelsConfig: text({
        flag: "models", env: "MODELS_CONFIG", arg: "<file>", default: "models/models.json", help: "model manifest",
        docs: "model manifest, or a model file or folder to serve (as paths given after `--`: `npm start -- a.gguf folder/`). A `.json` file given alone after `--` is the manifest too: `npm start -- my-models.json`"
    }),
    // Measured on a 2-core machine: node-llama-cpp's own default (4 threads) made small models
    // 10-1000x slower, and 1 thread decoded small models faster than 2. See README "Benchmarks".
    threads: integer({flag: "threads", env: "THREADS", arg: "<n>", default: 1, min: 1, max: 256, help: "CPU threads per model",
        docs: "CPU threads per model (a manifest entry's `threads` overrides; see [Benchmarks](performance.md#benchmarks) for why 1)"}),
    parallel: integer({flag: "parallel", env: "PARALLEL", arg: "<n>", default: 4, min: 1, max: 64, help: "concurrent sequences per chat model",
        docs: "concurrent sequences per chat model (a manifest entry's `parallel` overrides)"}),
    contextSize: integer({flag: "context-size", env: "CONTEXT_SIZE", arg: "<n>", default: 0, min: 0, max: 16_777_216,
        help: "tokens per sequence of a chat model without a manifest contextSize (0: its training context, or the largest that fits the memory budget)",
        docs: "tokens per sequence of each GGUF chat model whose manifest entry has no `contextSize` (models given as files or folders on the command line have none); `0` (the default): the model's training context when it fits `--memory-budget` (and the VRAM budget) beside the pinned models, else the largest multiple of 1,024 that does (at least 4,096; said in the log; as llama-server fits its context when `-c` is not given, `--fit`). Its KV cache is this times `parallel`: a 128 K-context model at 4 sequences needs tens of GB"}),
    queueSize: integer({flag: "queue-size", env: "QUEUE_SIZE", arg: "<n>", default: 32, min: 0, max: 100_000, help: "requests that may wait per model (beyond: 503)",
        docs: "requests that may wait per model; beyond that: 503 + `Retry-After`"}),
    apiKeysFile: text({flag: "keys-file", env: "API_KEYS_FILE", arg: "<file>", default: "api-keys.json", resolve: (file) => path.resolve(file),
        help: "hashed keys managed by `npm run keys`"}),
    apiKeys: list({env: "API_KEYS", default: [], help: "comma-separated plain API keys"}),
    bodyLimit: text({flag: "body-limit", env: "BODY_LIMIT", arg: "<size>", default: "10mb", help: "largest JSON request body (beyond: 413)", docs: "largest JSON body (beyond: 413)"}),
    maxBodyMemory: byteSize({
        flag: "max-body-memory", env: "MAX_BODY_MEMORY", arg: "<size>", default: defaultBodyMemory(),
        shownDefault: {help: `${Math.round(defaultBodyMemory() / (1024 * 1024))}mb`, docs: "1/16 of RAM, at least `64mb`"},
        help: "request bodies held in memory at once (1/16 of RAM; beyond: 503)",
        docs: "bytes that request bodies (JSON and uploads) hold in memory while they arrive, all requests together; a body that does not fit gets 503 + `Retry-After` (see [docs/security.md](security.md#request-bodies-in-memory))"
    }),
    ssePingMs: integer({env: "SSE_PING_MS", default: 5000, min: 10, max: hourMs, help: "SSE ping interval while no token flows", docs: "SSE comment ping while no token flows"}),
    shutdownTimeoutMs: integer({
        env: "SHUTDOWN_TIMEOUT_MS", default: 10_000, min: 0, max: hourMs, help: "how long shutdown lets requests finish",
        docs: "on SIGINT/SIGTERM, how long in-flight requests may finish before being aborted (a stream then ends with its format's error event, [docs/deployment.md](deployment.md#readiness-liveness-and-drain))"
    }),
    // 0 keeps `npm start` + Ctrl-C instant; behind a balancer set it above the health check's fall x interval (deploy/).
    drainSeconds: integer({
        flag: "drain-seconds", env: "DRAIN_SECONDS", arg: "<n>", default: 0, min: 0, max: 3600, help: "on SIGTERM: /health/ready says 503 this long before the port closes",
        docs: "on SIGINT/SIGTERM, `/health/ready` answers 503 this long, while everything is still served, before the port closes (behind a balancer: more than its check interval x fall; [docs/deployment.md](deployment.md))"
    }),
    logLevel: oneOf(logLevels, {env: "LOG_LEVEL", default: "info", caseSensitive: true, help: "silent, error, warn, info or debug",
        docs: "`silent`, `error`, `warn`, `info`, `debug` (logs go to stderr, one line per request)"}),
    // Measured on a 2-core machine (README "Embeddings"): 2 workers with 1 intra-op thread each (spinning off) beat every other combination.
    workers: integer({
        flag: "workers", env: "WORKERS", arg: "<n>", default: 2, min: 1, max: 64, help: "worker threads running every ONNX model",
        deprecated: {flag: "embed-workers", env: "EMBED_WORKERS", reason: "the worker pool runs every ONNX model now"},
        docs: "worker threads of the one pool that runs every ONNX model (`--embed-workers` / `EMBED_WORKERS`: deprecated names, still read, with a warning)"
    }),
    onnxThreads: integer({env: "ONNX_THREADS", default: 1, min: 1, max: 256, help: "ONNX Runtime threads per worker",
        docs: "ONNX Runtime intra-op threads per worker (a manifest entry's `threads` overrides)"}),
    // Pages served from this machine (local web UIs, the playground), on any port.
    corsOrigins: list({
        flag: "cors-origins", env: "CORS_ORIGINS", arg: "<list>", default: ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"],
        help: "origins whose web pages may call the server ('*' = any)",
        docs: "comma-separated origins whose web pages may call the server (CORS; requests from other pages are refused with 403, keys or not: [docs/security.md](security.md#web-pages-cross-site-requests)); `:*` = any port, `*` = any origin"
    }),
    allowedHosts: list({flag: "allowed-hosts", env: "ALLOWED_HOSTS", arg: "<list>", default: [], lowercase: true,
        help: "Host names accepted without API keys besides loopback (reverse proxy)",
        docs: "`Host` names served without API keys besides loopback ones, e.g. behind a reverse proxy"}),
    metricsPublic: onOff({flag: "metrics-public", env: "METRICS_PUBLIC", help: "serve GET /metrics without an API key", docs: "serve `GET /metrics` without a key"}),
    healthDetails: oneOf(healthDetailsSettings, {
        flag: "health-details", env: "HEALTH_DETAILS", arg: "<m>", default: "auto", help: "/health without a key: public, private (status only), auto (public while no keys)",
        docs: "what `GET /health` shows without a key: `public` (models, load, binary), `private` (status only), `auto` (public while the server has no keys)"
    }),
    publicUrl: httpUrl({
        flag: "public-url", env: "PUBLIC_URL", arg: "<url>", default: null, example: "https://llm.example.com",
        help: "base URL of image links (default: a loopback/allowed Host, else the bound address)",
        docs: "base URL of links the server hands out (image URLs); default: the request's `Host` when it is a loopback or allowed name, else the bound address"
    }),
    // Generous for a client on a slow link, short enough that idle sockets cannot pile up.
    headersTimeoutMs: integer({env: "HEADERS_TIMEOUT_MS", default: 30_000, min: 100, max: hourMs, help: "time a client has to send its request headers",
        docs: "a client must send its request headers within this (else 408 and the connection closes)"}),
    bodyTimeoutMs: integer({env: "BODY_TIMEOUT_MS", default: 30_000, min: 100, max: hourMs, help: "longest pause while a request body arrives",
        docs: "longest pause while a request body arrives (slow-loris); the connection closes"}),
    requestTimeoutMs: integer({env: "REQUEST_TIMEOUT_MS", default: 300_000, min: 100, max: hourMs, help: "time a client has to send its whole request (not the answer)",
        docs: "the whole request (headers and body) must arrive within this"}),
    keepAliveTimeoutMs: integer({env: "KEEP_ALIVE_TIMEOUT_MS", default: 5000, min: 100, max: hourMs, help: "idle keep-alive connections close after this"}),
    // A reader that takes nothing for this long is gone or hostile: its buffered response is freed.
    writeTimeoutMs: integer({env: "WRITE_TIMEOUT_MS", default: 30_000, min: 100, max: hourMs, help: "a response the client stops reading is cut after this",
        docs: "a response the client stops reading (bytes waiting, none taken) is cut after this"}),
    maxConnections: integer({flag: "max-connections", env: "MAX_CONNECTIONS", arg: "<n>", default: 512, min: 1, max: 1_000_000,
        help: "open connections at most (more are closed at once)"}),
    llamaBuild: oneOf(llamaBuildSettings, {
        flag: "llama-build", env: "LLAMA_BUILD", arg: "<b>", default: "auto", help: "llama.cpp binary on the CPU: native (npm run build:native), prebuilt, auto",
        docs: "llama.cpp binary: `native` (built by `npm run build:native`), `prebuilt` (shipped with node-llama-cpp), `auto` = native when built. See [Native build](performance.md#native-llamacpp-build)"
    }),
    gpu: oneOf(gpuSettings, {
        flag: "gpu", env: "GPU", arg: "<backend>", default: "auto", help: "GGUF backend: auto (a GPU only with a usable device), cuda, vulkan, metal, off",
        docs: "GGUF models' backend: `auto` (a GPU only when it has a usable device, else the CPU), `cuda`, `vulkan`, `metal`, `off`"
    }),
    gpuLayers: {
        flag: "gpu-layers", env: "GPU_LAYERS", arg: "<n>", default: "auto",
        parse: (raw, name) => raw === "auto" || raw === "max" ? raw : integerFrom(raw, name, 0, maxGpuLayers),
        help: "layers offloaded to the GPU: auto, max or a number", docs: `layers offloaded to the GPU: \`auto\` (what fits), \`max\`, or a number (0-${maxGpuLayers})`
    } satisfies Setting<"auto" | "max" | number> as Setting<"auto" | "max" | number>,
    ui: oneOf(["on", "off", "auto"], {flag: "ui", env: "UI", arg: "<m>", default: "auto", help: "the playground page at /: on, off, auto (off beyond loopback without keys)",
        docs: "the playground page at `/`: `on`, `off`, `auto` (on, except when listening beyond loopback without API keys)"}),
    // #31 settings: the model library (docs/models.md "The model library").
    memoryBudget: byteSize({
        flag: "memory-budget", env: "MEMORY_BUDGET", arg: "<size>", default: defaultMemoryBudget(),
        shownDefault: {help: `${Math.round(defaultMemoryBudget() / 1024 ** 2)}mb`, docs: "3/4 of RAM (or of a container's limit) less 1 GB, at least `512mb`"},
        help: "memory the loaded models may take together (3/4 of RAM less 1 GB); beyond it idle models are evicted",
        docs: "memory the loaded models may take together, by their estimates (`512mb`, `12gb`); a load that does not fit evicts idle models, least recently used first (see [docs/models.md](models.md#the-model-library))"
    }),
    vramBudget: {
        flag: "vram-budget", env: "VRAM_BUDGET", arg: "<size>", default: "auto",
        parse(raw, name) {
            const bytes = raw === "auto" ? raw : parseByteSize(raw);
            if (bytes == null || bytes !== "auto" && bytes < 1024)
                throw new ConfigError(`${name} must be auto or a size of at least 1kb such as 512mb or 8gb, got "${raw}"`);
            return bytes;
        },
        shownDefault: {help: "auto", docs: "`auto`: 85% of the GPU's VRAM as node-llama-cpp reports it, learnt once a GGUF model is estimated; 0 without a GPU"},
        help: "GPU memory the GGUF layers offloaded may take together (auto: 85% of the VRAM); meaningless without a GPU",
        docs: "GPU memory (VRAM) the loaded models' offloaded GGUF layers and contexts may take together, by their estimates; a load that does not fit evicts idle models holding VRAM, least recently used first. Meaningless without a GPU (`--gpu off`, or none found): every model is then in RAM ([docs/models.md](models.md#the-model-library))"
    } satisfies Setting<"auto" | number> as Setting<"auto" | number>,
    keepAliveSeconds: keepAlive({
        flag: "keep-alive", env: "KEEP_ALIVE", arg: "<d>",
        help: "idle time before a model is unloaded: 30s, 5m, 2h, 0 or forever (a preloaded model: forever unless given)",
        docs: "idle time before a model is unloaded: a duration (`30s`, `5m`, `2h`, or seconds), `0` (as soon as it is idle) or `forever` (or `-1`); a manifest `keepAlive` wins. Given, it applies to preloaded models too, which are otherwise kept forever (`--preload-all --keep-alive 10m`)"
    }),
    preloadAll: onOff({
        flag: "preload-all", env: "PRELOAD_ALL", help: "load every model at start (/health/ready: 503 until loaded)",
        docs: "load every model at start (a manifest `preload` wins per model); `/health/ready` answers 503 until they are loaded. For replicas behind a balancer"
    }),
    // Not the temp folder, which may be a RAM disk (tmpfs): the states saved there are meant to free memory.
    cacheDir: text({
        flag: "cache-dir", env: "CACHE_DIR", arg: "<dir>", default: defaultCacheDir(), resolve: (dir) => path.resolve(dir),
        shownDefault: {help: "~/.cache/local-openai-server", docs: "`$XDG_CACHE_HOME/local-openai-server`, else `~/.cache/local-openai-server`"},
        help: "folder of files a run keeps on disk (saved prompt caches); emptied of earlier runs' files at start",
        docs: "folder of the files a server run keeps on disk: the prompt caches of unloaded chat models ([docs/models.md](models.md#the-prompt-cache-across-an-unload)). Each run writes only in its own `run-<pid>-*` folder (mode 0700), removed at shutdown; the folders of runs whose process is gone are removed at start"
    }),
    memoryWaitSeconds: integer({
        flag: "memory-wait-seconds", env: "MEMORY_WAIT_SECONDS", arg: "<n>", default: 30, min: 0, max: 3600,
        help: "a load waits this long for busy models to free memory (then 503)",
        docs: "how long a load waits for busy models to free the memory it needs before its requests get 503 + `Retry-After`; not at all when evicting every model that may be evicted for it would not free enough (the rest is pinned): the 503 comes at once"
    })
};

// #31 settings
/** The default of --cache-dir: the user's cache folder, as llama.cpp's own (`LLAMA_CACHE`) and most tools. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
    const base = env.XDG_CACHE_HOME != null && env.XDG_CACHE_HOME !== "" ? env.XDG_CACHE_HOME : path.join(os.homedir(), ".cache");
    return path.join(base, "local-openai-server");
}

/**
 * The default of --memory-budget: 3/4 of the machine's memory (or of the container's limit, when lower) less
 * 1 GB for the process itself, the request bodies and the system; at least 512 MB. 24 GB -> 17 GB.
 */
export function defaultMemoryBudget(total = os.totalmem(), constrained = process.constrainedMemory?.() ?? 0): number {
    const memory = constrained > 0 && constrained < total ? constrained : total;
    return Math.max(512 * 1024 ** 2, Math.floor(memory * 0.75) - 1024 ** 3);
}

/**
 * The VRAM budget of `--vram-budget auto`: 85% of the GPU's VRAM (node-llama-cpp's `getVramState().total`); the rest
 * is left to the display, the driver and what llama.cpp allocates beyond the estimate (compute buffers it sizes at load).
 */
export function defaultVramBudget(totalVram: number): number {
    return Math.floor(totalVram * 0.85);
}

/**
 * The default of --max-body-memory: 1/16 of the machine's memory (or of the container's limit, when
 * lower), at least 64 MB. 24 GB -> 1.5 GB: 60 uploads of 25 MB, or 150 JSON bodies of 10 MB, at once.
 */
export function defaultBodyMemory(total = os.totalmem(), constrained = process.constrainedMemory?.() ?? 0): number {
    const memory = constrained > 0 && constrained < total ? constrained : total;
    return Math.max(64 * 1024 * 1024, Math.floor(memory / 16));
}
