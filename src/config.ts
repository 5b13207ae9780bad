import fs from "node:fs";
import os from "node:os";
import { parseArgs } from "node:util";
import path from "node:path";

/**
 * Every setting the server reads from the outside world, in one place.
 * A flag wins over its environment variable, which wins over the default.
 *
 * | flag             | env                  | default              | meaning |
 * |------------------|----------------------|----------------------|---------|
 * | --host           | HOST                 | 127.0.0.1            | address to bind |
 * | --port           | PORT                 | 8080                 | port to bind (0 = any free port) |
 * | --models         | MODELS_CONFIG        | models/models.json   | model manifest, or a model file or folder to serve (as paths after `--`) |
 * | --threads        | THREADS              | 1                    | CPU threads per model (a manifest entry may override) |
 * | --parallel       | PARALLEL             | 4                    | concurrent sequences per chat model (manifest may override) |
 * | --queue-size     | QUEUE_SIZE           | 32                   | requests that may wait per model before 503 |
 * | --keys-file      | API_KEYS_FILE        | api-keys.json        | hashed keys managed by `npm run keys` |
 * |                  | API_KEYS             | (none)               | comma-separated plain keys |
 * | --body-limit     | BODY_LIMIT           | 10mb                 | largest accepted JSON body |
 * | --max-body-memory| MAX_BODY_MEMORY      | 1/16 of RAM          | request bodies (JSON and uploads) held in memory at once, server-wide; past it new ones get 503 |
 * |                  | SSE_PING_MS          | 5000                 | SSE comment ping interval while no token is flowing |
 * |                  | SHUTDOWN_TIMEOUT_MS  | 10000                | how long shutdown waits for in-flight requests before aborting them |
 * | --drain-seconds  | DRAIN_SECONDS        | 0                    | on SIGTERM, /health/ready answers 503 this long (for balancers to notice) before the port closes |
 * |                  | LOG_LEVEL            | info                 | `silent`, `error`, `warn`, `info` or `debug` |
 * | --download       |                      | off                  | `npm start`: fetch the default models first (see HubConfig) |
 * | --allow-unverified |                    | off                  | with --download: install files no sha256 is known for (default: refused) |
 * | --workers        | WORKERS              | 2                    | worker threads of the one pool running every ONNX model (embeddings, speech, images) |
 * | --embed-workers  | EMBED_WORKERS        |                      | deprecated names of --workers / WORKERS (a warning says so) |
 * |                  | ONNX_THREADS         | 1                    | ONNX Runtime intra-op threads per worker (a manifest entry's `threads` overrides) |
 * | --cors-origins   | CORS_ORIGINS         | loopback origins     | comma-separated origins browsers may call from (`*` = any; `http://localhost:*` = any port) |
 * | --allowed-hosts  | ALLOWED_HOSTS        | (none)               | extra Host header names accepted while the server runs without keys (reverse proxies) |
 * | --metrics-public | METRICS_PUBLIC       | off                  | serve GET /metrics without an API key |
 * | --health-details | HEALTH_DETAILS       | auto                 | what GET /health shows without a key: `public` (models, load, binary), `private` (status only), `auto` (public while the server has no keys) |
 * | --public-url     | PUBLIC_URL           | (none)               | base URL of links the server hands out (image URLs); default: the request's Host when it is a loopback or allowed name, else the bound address |
 * |                  | HEADERS_TIMEOUT_MS   | 30000                | a client must send its request headers within this |
 * |                  | BODY_TIMEOUT_MS      | 30000                | longest silence while a request body is arriving (slow-loris) |
 * |                  | REQUEST_TIMEOUT_MS   | 300000               | a whole request (headers and body, not the response) must arrive within this |
 * |                  | KEEP_ALIVE_TIMEOUT_MS| 5000                 | idle keep-alive connections close after this |
 * |                  | WRITE_TIMEOUT_MS     | 30000                | a response the client stops reading (bytes waiting, none taken) is cut after this |
 * | --max-connections| MAX_CONNECTIONS      | 512                  | open connections at most; more are closed at once |
 * | --flash-attention| FLASH_ATTENTION      | auto                 | chat models: `on`, `off`, or `auto` (on where llama.cpp supports it, as llama-server) |
 * | --prompt-cache   | PROMPT_CACHE         | on                   | chat models: reuse the KV cache of a prompt's prefix: `on`, `exact` (only where outputs stay bit-identical), `off` |
 * | --llama-build    | LLAMA_BUILD          | auto                 | llama.cpp binary on the CPU: `native` (from `npm run build:native`), `prebuilt`, or `auto` (native when built) |
 * | --reasoning-format | REASONING_FORMAT   | parsed               | thinking models: `parsed` (reasoning apart, `reasoning_content`), `raw` (in the answer, as generated) |
 * | --gpu            | GPU                  | auto                 | GGUF models' backend: `auto` (a GPU only when it has a usable device, else the CPU), `cuda`, `vulkan`, `metal`, `off` |
 * | --gpu-layers     | GPU_LAYERS           | auto                 | layers offloaded to the GPU: `auto` (what fits), `max`, or a number |
 * | --ui             | UI                   | auto                 | the playground page at `/`: `on`, `off`, `auto` (on, except when listening beyond loopback without API keys) |
 * | --speculative    | SPECULATIVE          | lookup               | chat models' speculative decoding: `lookup` (drafts from the prompt and output), `draft` (a manifest `draftModel`; lookup for models without one), `off` |
 * | --draft-max      | DRAFT_MAX            | 16                   | most tokens per draft (a manifest `draftMax` overrides) |
 * | --response-store-mb | RESPONSE_STORE_MB | 64                   | stored Responses (`store`) per API key, in MB of their JSON (0 = none stored) |
 * | --max-audio-seconds | MAX_AUDIO_SECONDS | 7200                 | longest audio an upload may decode to (transcription); longer: 400 |
 *
 * The model downloader (`npm run download-models`, `npm start -- --download`) also reads:
 *
 * |                  | HF_ENDPOINT          | https://huggingface.co | base URL of the Hugging Face hub or a mirror |
 * |                  | HF_TOKEN             | (none)               | access token, needed for gated or private models |
 */
export type Config = {
    host: string;
    port: number;
    modelsConfig: string;
    /** Model files and folders to serve instead of a manifest (`npm start -- a.gguf b/`); empty = the manifest. */
    modelPaths: string[];
    threads: number;
    parallel: number;
    queueSize: number;
    apiKeys: string[];
    apiKeysFile: string;
    bodyLimit: string;
    /** Bytes that request bodies being received (JSON and uploads) may hold in memory at once, server-wide. */
    maxBodyMemory: number;
    ssePingMs: number;
    shutdownTimeoutMs: number;
    /** Graceful shutdown: seconds between /health/ready turning 503 and the listener closing. */
    drainSeconds: number;
    logLevel: LogLevel;
    /** Worker threads of the one pool that runs every ONNX task. */
    workers: number;
    /** ONNX Runtime intra-op threads per worker and model. */
    onnxThreads: number;
    /** Origins (exact, `scheme://host:*` for any port, or `*`) whose pages may call the server. */
    corsOrigins: string[];
    /** Host header names accepted in open mode besides loopback names and addresses. */
    allowedHosts: string[];
    metricsPublic: boolean;
    /** What /health shows to callers without a valid key. */
    healthDetails: HealthDetailsSetting;
    /** Base URL of links the server hands out; null = see `--public-url`. */
    publicUrl: string | null;
    headersTimeoutMs: number;
    /** Idle time allowed between two pieces of a request body; responses (generation) are never cut. */
    bodyTimeoutMs: number;
    /** Receiving the whole request; never applies to the response. */
    requestTimeoutMs: number;
    keepAliveTimeoutMs: number;
    /** How long a response may have bytes waiting that the client does not take before the connection is cut. */
    writeTimeoutMs: number;
    /** Open connections at most (each may hold a response's buffers). */
    maxConnections: number;
    /** Chat models' flash attention; `auto` = where llama.cpp supports it on the backend. */
    flashAttention: FlashAttentionSetting;
    /** Chat models reuse the KV cache of a prompt's longest common prefix with a sequence's last request (see README). */
    promptCache: PromptCacheSetting;
    /** Which llama.cpp binary node-llama-cpp loads; see src/runtimes/llama/llamaRuntime.ts. */
    llamaBuild: LlamaBuildSetting;
    /** Thinking models' reasoning: `parsed` = apart from the answer; `raw` = left in it. */
    reasoningFormat: "parsed" | "raw";
    /** The playground page at `/` (see uiEnabled). */
    ui: "on" | "off" | "auto";
    /** GGUF models' backend (see loadLlamaRuntime). */
    gpu: GpuSetting;
    /** Layers offloaded to the GPU (node-llama-cpp's `gpuLayers`). */
    gpuLayers: "auto" | "max" | number;
    /** Chat models' speculative decoding, unless the manifest says otherwise per model (docs/speculative.md). */
    speculative: SpeculativeSetting;
    /** Most tokens per draft. */
    draftMax: number;
    /** Each API key's share of the Responses store (and 1,000 responses), in MB; 0 = nothing is stored (ResponseStore). */
    responseStoreMb: number;
    /** Longest audio, in seconds, that an uploaded file may decode to (a small file can hold hours of silence). */
    maxAudioSeconds: number;
};

export const flashAttentionSettings = ["on", "off", "auto"] as const;
export type FlashAttentionSetting = typeof flashAttentionSettings[number];
export const promptCacheSettings = ["on", "exact", "off"] as const;
export type PromptCacheSetting = typeof promptCacheSettings[number];
export const speculativeSettings = ["lookup", "draft", "off"] as const;
export type SpeculativeSetting = typeof speculativeSettings[number];
export const llamaBuildSettings = ["auto", "native", "prebuilt"] as const;
export type LlamaBuildSetting = typeof llamaBuildSettings[number];

export const healthDetailsSettings = ["auto", "public", "private"] as const;
export type HealthDetailsSetting = typeof healthDetailsSettings[number];

export const gpuSettings = ["auto", "cuda", "vulkan", "metal", "off"] as const;
export type GpuSetting = typeof gpuSettings[number];

export const logLevels = ["silent", "error", "warn", "info", "debug"] as const;
export type LogLevel = typeof logLevels[number];

export class ConfigError extends Error {}

/** Defaults, exported so tests and docs use the same numbers. */
export const defaultConfig: Config = {
    host: "127.0.0.1",
    port: 8080,
    modelsConfig: "models/models.json",
    modelPaths: [],
    // Measured on a 2-core machine: node-llama-cpp's own default (4 threads) made small models
    // 10-1000x slower, and 1 thread decoded small models faster than 2. See README "Benchmarks".
    threads: 1,
    parallel: 4,
    queueSize: 32,
    apiKeys: [],
    apiKeysFile: "api-keys.json",
    bodyLimit: "10mb",
    maxBodyMemory: defaultBodyMemory(),
    ssePingMs: 5000,
    shutdownTimeoutMs: 10_000,
    // 0 keeps `npm start` + Ctrl-C instant; behind a balancer set it above the health check's fall x interval (deploy/).
    drainSeconds: 0,
    logLevel: "info",
    // Measured on a 2-core machine (README "Embeddings"): 2 workers with 1 intra-op thread each
    // (spinning off) beat every other combination.
    workers: 2,
    onnxThreads: 1,
    // Pages served from this machine (local web UIs, the playground), on any port.
    corsOrigins: ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"],
    allowedHosts: [],
    metricsPublic: false,
    healthDetails: "auto",
    publicUrl: null,
    // Generous for a client on a slow link, short enough that idle sockets cannot pile up.
    headersTimeoutMs: 30_000,
    bodyTimeoutMs: 30_000,
    requestTimeoutMs: 300_000,
    keepAliveTimeoutMs: 5000,
    // A reader that takes nothing for this long is gone or hostile: its buffered response is freed.
    writeTimeoutMs: 30_000,
    maxConnections: 512,
    // As llama-server (`-fa auto`): on this machine's CPU it raised decode 567 -> 629 tok/s (llama-bench, README "Chat performance").
    flashAttention: "auto",
    promptCache: "on",
    llamaBuild: "auto",
    gpu: "auto",
    gpuLayers: "auto",
    reasoningFormat: "parsed",
    ui: "auto",
    // Greedy output stays the same token for token; rejected drafts are kept rare (docs/speculative.md).
    speculative: "lookup",
    draftMax: 16,
    // As OpenAI keeps responses for previous_response_id; per key, so that one key cannot push out another's.
    responseStoreMb: 64,
    // 2 hours: 460 MB of 16 kHz samples, what a worker holds for one request at most.
    maxAudioSeconds: 7200
};

/** What `npm start` was asked to do: serve with `config`, after fetching the default models when `download`. */
export type StartOptions = {
    config: Config; download: boolean;
    /** With `download`: accept files no sha256 is known for. */
    allowUnverified: boolean;
    /** Deprecated settings that were used, to be logged. */
    warnings: string[];
};

/** The server's settings; also accepts (and ignores) `--download`, so one command line parses everywhere. */
export function loadConfig(argv: string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): Config {
    return loadStartOptions(argv, env).config;
}

export function loadStartOptions(argv: string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): StartOptions {
    const { values, positionals } = parseFlags({
        args: argv,
        allowPositionals: true,
        strict: true,
        options: {
            host: { type: "string" },
            port: { type: "string" },
            models: { type: "string" },
            threads: { type: "string" },
            parallel: { type: "string" },
            "queue-size": { type: "string" },
            "keys-file": { type: "string" },
            "body-limit": { type: "string" },
            "max-body-memory": { type: "string" },
            download: { type: "boolean" },
            "allow-unverified": { type: "boolean" },
            workers: { type: "string" },
            "embed-workers": { type: "string" },
            "cors-origins": { type: "string" },
            "allowed-hosts": { type: "string" },
            "metrics-public": { type: "boolean" },
            "health-details": { type: "string" },
            "public-url": { type: "string" },
            "flash-attention": { type: "string" },
            "prompt-cache": { type: "string" },
            "llama-build": { type: "string" },
            "max-connections": { type: "string" },
            gpu: { type: "string" },
            "reasoning-format": { type: "string" },
            "gpu-layers": { type: "string" },
            "drain-seconds": { type: "string" },
            ui: { type: "string" },
            speculative: { type: "string" },
            "draft-max": { type: "string" },
            "response-store-mb": { type: "string" },
            "max-audio-seconds": { type: "string" }
        }
    });
    const pick = (flag: string | undefined, envName: string) => {
        if (flag != null && flag.trim() === "")
            throw new ConfigError(`--${flagOf(envName)} needs a value`);
        return flag ?? nonEmpty(env[envName]);
    };

    // `--models` naming a model file or folder (not a .json manifest) serves it, as paths given after `--` do.
    const models = pick(values.models, "MODELS_CONFIG");
    const modelsIsPath = models != null && !models.toLowerCase().endsWith(".json") && !isFolderWithManifest(models);
    const modelPaths = [...(modelsIsPath ? [models] : []), ...positionals].map((given) => path.resolve(given));
    const config: Config = {
        // `[::1]` as in a URL is accepted: the brackets are not part of the address.
        host: (pick(values.host, "HOST") ?? defaultConfig.host).replace(/^\[(.*)\]$/, "$1"),
        port: integer(pick(values.port, "PORT"), "port", defaultConfig.port, 0, 65535),
        modelsConfig: path.resolve(models == null ? defaultConfig.modelsConfig : modelsIsPath ? defaultConfig.modelsConfig
            : isFolderWithManifest(models) ? path.join(models, "models.json") : models),
        modelPaths,
        threads: integer(pick(values.threads, "THREADS"), "threads", defaultConfig.threads, 1, 256),
        parallel: integer(pick(values.parallel, "PARALLEL"), "parallel", defaultConfig.parallel, 1, 64),
        queueSize: integer(pick(values["queue-size"], "QUEUE_SIZE"), "queue-size", defaultConfig.queueSize, 0, 100_000),
        apiKeys: (nonEmpty(env.API_KEYS) ?? "").split(",").map((key) => key.trim()).filter((key) => key !== ""),
        apiKeysFile: path.resolve(pick(values["keys-file"], "API_KEYS_FILE") ?? defaultConfig.apiKeysFile),
        bodyLimit: pick(values["body-limit"], "BODY_LIMIT") ?? defaultConfig.bodyLimit,
        maxBodyMemory: byteSize(pick(values["max-body-memory"], "MAX_BODY_MEMORY"), "max-body-memory", defaultConfig.maxBodyMemory),
        ssePingMs: integer(nonEmpty(env.SSE_PING_MS), "SSE_PING_MS", defaultConfig.ssePingMs, 10, 3_600_000),
        shutdownTimeoutMs: integer(nonEmpty(env.SHUTDOWN_TIMEOUT_MS), "SHUTDOWN_TIMEOUT_MS", defaultConfig.shutdownTimeoutMs, 0, 3_600_000),
        drainSeconds: integer(pick(values["drain-seconds"], "DRAIN_SECONDS"), "drain-seconds", defaultConfig.drainSeconds, 0, 3600),
        logLevel: logLevel(nonEmpty(env.LOG_LEVEL)),
        workers: integer(pick(values.workers ?? values["embed-workers"], "WORKERS") ?? nonEmpty(env.EMBED_WORKERS), "workers", defaultConfig.workers, 1, 64),
        onnxThreads: integer(nonEmpty(env.ONNX_THREADS), "ONNX_THREADS", defaultConfig.onnxThreads, 1, 256),
        corsOrigins: list(pick(values["cors-origins"], "CORS_ORIGINS")) ?? defaultConfig.corsOrigins,
        allowedHosts: list(pick(values["allowed-hosts"], "ALLOWED_HOSTS"))?.map((host) => host.toLowerCase()) ?? defaultConfig.allowedHosts,
        metricsPublic: values["metrics-public"] === true || boolean(nonEmpty(env.METRICS_PUBLIC), "METRICS_PUBLIC"),
        healthDetails: oneOf(pick(values["health-details"], "HEALTH_DETAILS"), "health-details", healthDetailsSettings, defaultConfig.healthDetails),
        publicUrl: publicUrl(pick(values["public-url"], "PUBLIC_URL")),
        headersTimeoutMs: integer(nonEmpty(env.HEADERS_TIMEOUT_MS), "HEADERS_TIMEOUT_MS", defaultConfig.headersTimeoutMs, 100, 3_600_000),
        bodyTimeoutMs: integer(nonEmpty(env.BODY_TIMEOUT_MS), "BODY_TIMEOUT_MS", defaultConfig.bodyTimeoutMs, 100, 3_600_000),
        requestTimeoutMs: integer(nonEmpty(env.REQUEST_TIMEOUT_MS), "REQUEST_TIMEOUT_MS", defaultConfig.requestTimeoutMs, 100, 3_600_000),
        keepAliveTimeoutMs: integer(nonEmpty(env.KEEP_ALIVE_TIMEOUT_MS), "KEEP_ALIVE_TIMEOUT_MS", defaultConfig.keepAliveTimeoutMs, 100, 3_600_000),
        writeTimeoutMs: integer(nonEmpty(env.WRITE_TIMEOUT_MS), "WRITE_TIMEOUT_MS", defaultConfig.writeTimeoutMs, 100, 3_600_000),
        maxConnections: integer(pick(values["max-connections"], "MAX_CONNECTIONS"), "max-connections", defaultConfig.maxConnections, 1, 1_000_000),
        flashAttention: oneOf(pick(values["flash-attention"], "FLASH_ATTENTION"), "flash-attention", flashAttentionSettings, defaultConfig.flashAttention),
        promptCache: oneOf(pick(values["prompt-cache"], "PROMPT_CACHE"), "prompt-cache", promptCacheSettings, defaultConfig.promptCache),
        llamaBuild: oneOf(pick(values["llama-build"], "LLAMA_BUILD"), "llama-build", llamaBuildSettings, defaultConfig.llamaBuild),
        gpu: oneOf(pick(values.gpu, "GPU"), "gpu", gpuSettings, defaultConfig.gpu),
        gpuLayers: gpuLayers(pick(values["gpu-layers"], "GPU_LAYERS")),
        reasoningFormat: oneOf(pick(values["reasoning-format"], "REASONING_FORMAT"), "reasoning-format", ["parsed", "raw"] as const, defaultConfig.reasoningFormat),
        ui: oneOf(pick(values.ui, "UI"), "ui", ["on", "off", "auto"] as const, defaultConfig.ui),
        speculative: oneOf(pick(values.speculative, "SPECULATIVE"), "speculative", speculativeSettings, defaultConfig.speculative),
        draftMax: integer(pick(values["draft-max"], "DRAFT_MAX"), "draft-max", defaultConfig.draftMax, 1, 64),
        responseStoreMb: integer(pick(values["response-store-mb"], "RESPONSE_STORE_MB"), "response-store-mb", defaultConfig.responseStoreMb, 0, 1_048_576),
        maxAudioSeconds: integer(pick(values["max-audio-seconds"], "MAX_AUDIO_SECONDS"), "max-audio-seconds", defaultConfig.maxAudioSeconds, 1, 86_400)
    };
    const warnings: string[] = [];
    if (values["embed-workers"] != null)
        warnings.push("--embed-workers is deprecated: the worker pool runs every ONNX model now; use --workers.");
    if (nonEmpty(env.EMBED_WORKERS) != null)
        warnings.push("EMBED_WORKERS is deprecated: the worker pool runs every ONNX model now; use WORKERS.");
    return {config, download: values.download === true, allowUnverified: values["allow-unverified"] === true, warnings};
}

/**
 * Where models are downloaded from. Kept out of Config because the server itself never talks to
 * the hub: only the downloader (`npm run download-models`, `npm start -- --download`) reads these.
 */
export type HubConfig = {
    /** Base URL without a trailing slash; files are at `<hfEndpoint>/<repo>/resolve/<revision>/<file>`. */
    hfEndpoint: string;
    /** Sent as `Authorization: Bearer` to the hub (never to the CDN it redirects to); null = anonymous. */
    hfToken: string | null;
};

export const defaultHubConfig: HubConfig = {hfEndpoint: "https://huggingface.co", hfToken: null};

export function loadHubConfig(env: NodeJS.ProcessEnv = process.env): HubConfig {
    const endpoint = nonEmpty(env.HF_ENDPOINT) ?? defaultHubConfig.hfEndpoint;
    let url: URL | null = null;
    try {
        url = new URL(endpoint);
    } catch {
        // reported below
    }
    if (url == null || (url.protocol !== "https:" && url.protocol !== "http:"))
        throw new ConfigError(`HF_ENDPOINT must be an http(s) URL such as ${defaultHubConfig.hfEndpoint}, got "${endpoint}"`);
    return {hfEndpoint: endpoint.replace(/\/+$/, ""), hfToken: nonEmpty(env.HF_TOKEN) ?? null};
}

/** node's parseArgs, with its usage errors (unknown flag, missing value) turned into ConfigErrors. */
const parseFlags: typeof parseArgs = (options) => {
    try {
        return parseArgs(options);
    } catch (error) {
        throw new ConfigError(`${(error as Error).message}. See \`npm start -- --help\` for every flag and environment variable.`);
    }
};

function nonEmpty(value: string | undefined) {
    return value == null || value.trim() === "" ? undefined : value.trim();
}

const flagByEnv: Record<string, string> = {
    HOST: "host", PORT: "port", MODELS_CONFIG: "models", THREADS: "threads", PARALLEL: "parallel",
    QUEUE_SIZE: "queue-size", API_KEYS_FILE: "keys-file", BODY_LIMIT: "body-limit", MAX_BODY_MEMORY: "max-body-memory", WORKERS: "workers", EMBED_WORKERS: "embed-workers",
    CORS_ORIGINS: "cors-origins", ALLOWED_HOSTS: "allowed-hosts",
    HEALTH_DETAILS: "health-details", PUBLIC_URL: "public-url",
    FLASH_ATTENTION: "flash-attention", PROMPT_CACHE: "prompt-cache", LLAMA_BUILD: "llama-build", MAX_CONNECTIONS: "max-connections", GPU: "gpu", GPU_LAYERS: "gpu-layers",
    REASONING_FORMAT: "reasoning-format", DRAIN_SECONDS: "drain-seconds", UI: "ui", SPECULATIVE: "speculative", DRAFT_MAX: "draft-max",
    RESPONSE_STORE_MB: "response-store-mb",
    MAX_AUDIO_SECONDS: "max-audio-seconds"
};

/**
 * The default of --max-body-memory: 1/16 of the machine's memory (or of the container's limit, when
 * lower), at least 64 MB. 24 GB -> 1.5 GB: 60 uploads of 25 MB, or 150 JSON bodies of 10 MB, at once.
 */
export function defaultBodyMemory(total = os.totalmem(), constrained = process.constrainedMemory?.() ?? 0): number {
    const memory = constrained > 0 && constrained < total ? constrained : total;
    return Math.max(64 * 1024 * 1024, Math.floor(memory / 16));
}

/** "10mb", "512kb", "1.5gb", "2048" (bytes) as bytes (1 mb = 1024 * 1024, as the body parser reads it); null when it is not one. */
export function parseByteSize(text: string): number | null {
    const match = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?\s*$/i.exec(text);
    if (match == null)
        return null;
    const unit = {b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3}[(match[2] ?? "b").toLowerCase() as "b" | "kb" | "mb" | "gb"];
    return Math.floor(Number(match[1]) * unit);
}

/** A size setting (`512mb`, `2gb`), at least 1 KB. */
function byteSize(raw: string | undefined, name: string, fallback: number) {
    if (raw == null)
        return fallback;
    const bytes = parseByteSize(raw);
    if (bytes == null || bytes < 1024)
        throw new ConfigError(`${name} must be a size of at least 1kb such as 512mb or 2gb, got "${raw}"`);
    return bytes;
}

function gpuLayers(raw: string | undefined): "auto" | "max" | number {
    if (raw == null || raw === "auto" || raw === "max")
        return raw ?? defaultConfig.gpuLayers;
    return integer(raw, "gpu-layers", 0, 0, 10_000);
}

/** An http(s) base URL without a trailing slash, or null when not given. */
function publicUrl(raw: string | undefined): string | null {
    if (raw == null)
        return null;
    let url: URL | null = null;
    try {
        url = new URL(raw);
    } catch {
        // reported below
    }
    if (url == null || (url.protocol !== "http:" && url.protocol !== "https:"))
        throw new ConfigError(`--public-url must be an http(s) URL such as https://llm.example.com, got "${raw}"`);
    return raw.replace(/\/+$/, "");
}

function isFolderWithManifest(given: string) {
    try {
        return fs.statSync(given).isDirectory() && fs.existsSync(path.join(given, "models.json"));
    } catch {
        return false;
    }
}

/** A comma-separated list, entries trimmed, empty ones dropped; undefined when not given. */
function list(raw: string | undefined) {
    return raw?.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "");
}

function boolean(raw: string | undefined, name: string) {
    if (raw == null)
        return false;
    if (/^(1|true|yes|on)$/i.test(raw))
        return true;
    if (/^(0|false|no|off)$/i.test(raw))
        return false;
    throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function flagOf(envName: string) {
    return flagByEnv[envName] ?? envName;
}

function integer(raw: string | undefined, name: string, fallback: number, min: number, max: number) {
    if (raw == null)
        return fallback;
    // Plain decimal digits only: Number() would also take "", "0x1F90" and "1e3".
    const value = /^-?\d+$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isInteger(value) || value < min || value > max)
        throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
    return value;
}

function oneOf<T extends string>(raw: string | undefined, name: string, allowed: readonly T[], fallback: T): T {
    if (raw == null)
        return fallback;
    const value = raw.toLowerCase();
    if (!(allowed as readonly string[]).includes(value))
        throw new ConfigError(`${name} must be one of ${allowed.join(", ")}, got "${raw}"`);
    return value as T;
}

function logLevel(raw: string | undefined): LogLevel {
    if (raw == null)
        return defaultConfig.logLevel;
    if (!(logLevels as readonly string[]).includes(raw))
        throw new ConfigError(`LOG_LEVEL must be one of ${logLevels.join(", ")}, got "${raw}"`);
    return raw as LogLevel;
}
