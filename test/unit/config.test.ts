import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, defaultBodyMemory, defaultConfig, defaultMemoryBudget, defaultVramBudget, loadConfig, loadStartOptions } from "../../src/config.js";
import { defaultCacheDir } from "../../src/settings/serverSettings.js";

/** The ConfigError message thrown by loadConfig (fails when nothing or something else is thrown). */
function configErrorOf(argv: string[], env: NodeJS.ProcessEnv = {}): string {
    try {
        loadConfig(argv, env);
    } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as Error).message;
    }
    throw new Error("loadConfig accepted the settings");
}

describe("loadConfig", () => {
    it("uses the defaults when nothing is set, with paths made absolute", () => {
        expect(loadConfig([], {})).toEqual({
            ...defaultConfig,
            modelsConfig: path.resolve("models/models.json"),
            apiKeysFile: path.resolve("api-keys.json")
        });
        expect(defaultConfig).toMatchObject({
            host: "127.0.0.1", port: 8080, threads: 1, parallel: 4, queueSize: 32, apiKeys: [],
            bodyLimit: "10mb", ssePingMs: 5000, shutdownTimeoutMs: 10_000, logLevel: "info"
        });
    });

    it("does not read process.env when an env object is given", () => {
        const saved = process.env.PORT;
        process.env.PORT = "1234";
        try {
            expect(loadConfig([], {}).port).toBe(8080);
        } finally {
            if (saved === undefined)
                delete process.env.PORT;
            else
                process.env.PORT = saved;
        }
    });

    it("reads every setting from the environment when no flag is given", () => {
        const config = loadConfig([], {
            HOST: "0.0.0.0", PORT: "9000", MODELS_CONFIG: "/etc/models.json", THREADS: "3", PARALLEL: "2",
            QUEUE_SIZE: "0", API_KEYS_FILE: "/etc/keys.json", BODY_LIMIT: "1mb", SSE_PING_MS: "250",
            SHUTDOWN_TIMEOUT_MS: "0", LOG_LEVEL: "debug", API_KEYS: "k1", WORKERS: "3", ONNX_THREADS: "2",
            CORS_ORIGINS: "https://a.example, http://b.lan:*", ALLOWED_HOSTS: "LLM.internal,proxy:8080", METRICS_PUBLIC: "true",
            HEADERS_TIMEOUT_MS: "1000", BODY_TIMEOUT_MS: "2000", REQUEST_TIMEOUT_MS: "3000", KEEP_ALIVE_TIMEOUT_MS: "4000",
            FLASH_ATTENTION: "off", PROMPT_CACHE: "exact", LLAMA_BUILD: "prebuilt", WRITE_TIMEOUT_MS: "5000", MAX_CONNECTIONS: "64",
            HEALTH_DETAILS: "private", PUBLIC_URL: "https://llm.example.com/", GPU: "off", GPU_LAYERS: "8", REASONING_FORMAT: "raw", DRAIN_SECONDS: "7", UI: "off",
            SPECULATIVE: "off", DRAFT_MAX: "5", DRAFT_P_MIN: "0.25", MAX_BODY_MEMORY: "256mb", RESPONSE_STORE_MB: "0",
            MAX_AUDIO_SECONDS: "600", MEMORY_BUDGET: "2gb", VRAM_BUDGET: "3gb", KEEP_ALIVE: "90s", PRELOAD_ALL: "yes", MEMORY_WAIT_SECONDS: "5",
            CACHE_DIR: "/var/cache/los", PROMPT_CACHE_DISK: "256mb", CONTEXT_SIZE: "8192"
        });
        expect(config).toEqual({
            host: "0.0.0.0", port: 9000, modelsConfig: "/etc/models.json", modelPaths: [], threads: 3, parallel: 2, queueSize: 0,
            apiKeys: ["k1"], apiKeysFile: "/etc/keys.json", bodyLimit: "1mb", ssePingMs: 250, shutdownTimeoutMs: 0,
            logLevel: "debug", workers: 3, onnxThreads: 2,
            corsOrigins: ["https://a.example", "http://b.lan:*"], allowedHosts: ["llm.internal", "proxy:8080"], metricsPublic: true,
            headersTimeoutMs: 1000, bodyTimeoutMs: 2000, requestTimeoutMs: 3000, keepAliveTimeoutMs: 4000,
            writeTimeoutMs: 5000, maxConnections: 64, healthDetails: "private", publicUrl: "https://llm.example.com",
            flashAttention: "off", promptCache: "exact", llamaBuild: "prebuilt", gpu: "off", gpuLayers: 8, reasoningFormat: "raw", drainSeconds: 7, ui: "off",
            speculative: "off", draftMax: 5, draftPMin: 0.25, maxBodyMemory: 256 * 1024 * 1024, responseStoreMb: 0,
            maxAudioSeconds: 600, memoryBudget: 2 * 1024 ** 3, vramBudget: 3 * 1024 ** 3, keepAliveSeconds: 90, preloadAll: true, memoryWaitSeconds: 5,
            cacheDir: "/var/cache/los", promptCacheDisk: 256 * 1024 ** 2, contextSize: 8192
        });
    });

    it("the model library's settings: --memory-budget (3/4 of RAM less 1 GB), --keep-alive (5 minutes), --preload-all, --memory-wait-seconds", () => {
        expect(defaultMemoryBudget(24 * 1024 ** 3, 0)).toBe(17 * 1024 ** 3);
        expect(defaultMemoryBudget(24 * 1024 ** 3, 8 * 1024 ** 3)).toBe(5 * 1024 ** 3);
        expect(defaultMemoryBudget(1024 ** 3, 0)).toBe(512 * 1024 ** 2);
        // Not given (the library then gives 5 minutes, a preloaded model forever) is told apart from any value given.
        expect(defaultConfig).toMatchObject({keepAliveSeconds: undefined, preloadAll: false, memoryWaitSeconds: 30});
        expect(loadConfig(["--memory-budget", "6gb", "--keep-alive", "forever", "--preload-all", "--memory-wait-seconds", "0"], {MEMORY_BUDGET: "1gb", KEEP_ALIVE: "1m"}))
            .toMatchObject({memoryBudget: 6 * 1024 ** 3, keepAliveSeconds: null, preloadAll: true, memoryWaitSeconds: 0});
        expect(loadConfig(["--preload-all"], {KEEP_ALIVE: "5m"})).toMatchObject({keepAliveSeconds: 300, preloadAll: true});
        for (const [given, seconds] of [["0", 0], ["30", 30], ["500ms", 0.5], ["2h", 7200], ["1.5m", 90], ["-1", null], ["720h", 2_592_000]] as const)
            expect(loadConfig([`--keep-alive=${given}`], {}).keepAliveSeconds, given).toBe(seconds);
        expect(configErrorOf(["--keep-alive", "soon"])).toBe('keep-alive must be "forever", a number of seconds, or a duration such as 30s, 5m or 2h; got "soon"');
        expect(configErrorOf(["--keep-alive", "1".repeat(400)])).toContain("keep-alive must be");
        expect(configErrorOf(["--memory-budget", "lots"])).toBe('memory-budget must be a size of at least 1kb such as 512mb or 2gb, got "lots"');
    });

    it("a negative number after a flag that takes a value is its value (`--keep-alive -1`, as documented), not an ambiguous flag", () => {
        expect(loadConfig(["--keep-alive", "-1"], {}).keepAliveSeconds).toBeNull();
        expect(loadConfig(["--keep-alive", "-1", "--port", "9000", "model.gguf"], {})).toMatchObject({keepAliveSeconds: null, port: 9000, modelPaths: [path.resolve("model.gguf")]});
        // The setting's own check then speaks: the value is read, not taken for a flag.
        expect(configErrorOf(["--port", "-5"])).toBe('port must be an integer from 0 to 65535, got "-5"');
        // Past `--`, nothing is a flag, and a switch takes no value.
        expect(loadConfig(["--", "--keep-alive", "-1"], {}).keepAliveSeconds).toBeUndefined();
        expect(configErrorOf(["--preload-all", "-1"])).toContain("Unknown option '-1'");
    });

    it("--vram-budget: auto (85% of the GPU's VRAM, asked for once a model needs VRAM) or a size", () => {
        expect(defaultConfig.vramBudget).toBe("auto");
        expect(defaultVramBudget(8 * 1024 ** 3)).toBe(Math.floor(8 * 1024 ** 3 * 0.85));
        expect(loadConfig(["--vram-budget", "6gb"], {VRAM_BUDGET: "1gb"}).vramBudget).toBe(6 * 1024 ** 3);
        expect(loadConfig([], {VRAM_BUDGET: "512mb"}).vramBudget).toBe(512 * 1024 ** 2);
        expect(loadConfig(["--vram-budget=auto"], {}).vramBudget).toBe("auto");
        expect(configErrorOf(["--vram-budget", "most"])).toBe('vram-budget must be auto or a size of at least 1kb such as 512mb or 8gb, got "most"');
    });

    it("--cache-dir (the user's cache folder) and --prompt-cache-disk (1 GB per model, 0 = nothing saved)", () => {
        expect(defaultCacheDir({XDG_CACHE_HOME: "/x/cache"})).toBe(path.join("/x/cache", "local-openai-server"));
        expect(defaultCacheDir({})).toBe(path.join(os.homedir(), ".cache", "local-openai-server"));
        expect(defaultConfig.promptCacheDisk).toBe(1024 ** 3);
        expect(loadConfig(["--cache-dir", "rel/dir", "--prompt-cache-disk", "0"], {CACHE_DIR: "/other", PROMPT_CACHE_DISK: "1gb"}))
            .toMatchObject({cacheDir: path.resolve("rel/dir"), promptCacheDisk: 0});
        expect(configErrorOf(["--prompt-cache-disk", "lots"])).toBe('prompt-cache-disk must be 0 or a size of at least 1kb such as 512mb or 2gb, got "lots"');
        expect(configErrorOf([], {PROMPT_CACHE_DISK: "10b"})).toBe('prompt-cache-disk must be 0 or a size of at least 1kb such as 512mb or 2gb, got "10b"');
    });

    it("--max-audio-seconds wins over MAX_AUDIO_SECONDS: 2 hours by default, whole seconds from 1 to a day", () => {
        expect(defaultConfig.maxAudioSeconds).toBe(7200);
        expect(loadConfig(["--max-audio-seconds", "30"], {MAX_AUDIO_SECONDS: "60"}).maxAudioSeconds).toBe(30);
        expect(configErrorOf(["--max-audio-seconds", "0"])).toBe('max-audio-seconds must be an integer from 1 to 86400, got "0"');
        expect(configErrorOf([], {MAX_AUDIO_SECONDS: "2h"})).toBe('max-audio-seconds must be an integer from 1 to 86400, got "2h"');
    });

    it("--max-body-memory takes a size, wins over MAX_BODY_MEMORY, and defaults to 1/16 of the memory (a container's limit when lower), at least 64 MB", () => {
        expect(loadConfig(["--max-body-memory", "1.5gb"], {MAX_BODY_MEMORY: "64mb"}).maxBodyMemory).toBe(1.5 * 1024 ** 3);
        expect(loadConfig([], {MAX_BODY_MEMORY: "512KB"}).maxBodyMemory).toBe(512 * 1024);
        expect(loadConfig([], {MAX_BODY_MEMORY: "100000"}).maxBodyMemory).toBe(100_000);
        expect(configErrorOf(["--max-body-memory", "lots"])).toBe('max-body-memory must be a size of at least 1kb such as 512mb or 2gb, got "lots"');
        expect(configErrorOf([], {MAX_BODY_MEMORY: "100b"})).toContain("at least 1kb");
        expect(defaultBodyMemory(24 * 1024 ** 3, 0)).toBe(1.5 * 1024 ** 3);
        expect(defaultBodyMemory(24 * 1024 ** 3, 4 * 1024 ** 3)).toBe(256 * 1024 ** 2);
        expect(defaultBodyMemory(24 * 1024 ** 3, 2 ** 64)).toBe(1.5 * 1024 ** 3);
        expect(defaultBodyMemory(512 * 1024 ** 2, 0)).toBe(64 * 1024 ** 2);
    });

    it("--cors-origins, --allowed-hosts and --metrics-public win over their variables; METRICS_PUBLIC must be a boolean", () => {
        const config = loadConfig(["--cors-origins", "*", "--allowed-hosts", "a.lan", "--metrics-public"], {CORS_ORIGINS: "https://x", ALLOWED_HOSTS: "b.lan"});
        expect(config).toMatchObject({corsOrigins: ["*"], allowedHosts: ["a.lan"], metricsPublic: true});
        expect(loadConfig([], {METRICS_PUBLIC: "0"}).metricsPublic).toBe(false);
        expect(() => loadConfig([], {METRICS_PUBLIC: "maybe"})).toThrow("METRICS_PUBLIC must be true or false");
    });

    it.each([
        [["--public-url", "ftp://x"], {}, '--public-url must be an http(s) URL such as https://llm.example.com, got "ftp://x"'],
        [[], {PUBLIC_URL: "llm.example.com"}, '--public-url must be an http(s) URL such as https://llm.example.com, got "llm.example.com"'],
        [["--gpu-layers", "lots"], {}, 'gpu-layers must be an integer from 0 to 10000, got "lots"'],
        [[], {GPU_LAYERS: "MAX"}, 'gpu-layers must be an integer from 0 to 10000, got "MAX"'],
        [[], {GPU: "rocm"}, 'gpu must be one of auto, cuda, vulkan, metal, off, got "rocm"'],
        [["--health-details", "all"], {}, 'health-details must be one of auto, public, private, got "all"'],
        [[], {REASONING_FORMAT: "hidden"}, 'reasoning-format must be one of parsed, raw, got "hidden"'],
        [["--response-store-mb=-1"], {}, 'response-store-mb must be an integer from 0 to 1048576, got "-1"'],
        [["--max-connections", "0"], {}, 'max-connections must be an integer from 1 to 1000000, got "0"'],
        [[], {WRITE_TIMEOUT_MS: "99"}, 'WRITE_TIMEOUT_MS must be an integer from 100 to 3600000, got "99"'],
        [["--embed-workers="], {}, "--workers needs a value"],
        [[], {EMBED_WORKERS: "65"}, 'workers must be an integer from 1 to 64, got "65"']
    ] as const)("%j %j: %s", (argv, env, message) => {
        expect(configErrorOf([...argv], env)).toBe(message);
    });

    it("--public-url loses its trailing slashes; --gpu-layers takes auto, max or a number", () => {
        expect(loadConfig(["--public-url", "http://llm.lan:8080//"], {}).publicUrl).toBe("http://llm.lan:8080");
        expect(loadConfig([], {}).publicUrl).toBeNull();
        expect(loadConfig(["--gpu-layers", "max"], {GPU_LAYERS: "3"}).gpuLayers).toBe("max");
        expect(loadConfig([], {GPU_LAYERS: "0"}).gpuLayers).toBe(0);
    });

    it("--drain-seconds wins over DRAIN_SECONDS; both take whole seconds from 0 to 3600", () => {
        expect(loadConfig(["--drain-seconds", "12"], {DRAIN_SECONDS: "3"}).drainSeconds).toBe(12);
        expect(loadConfig([], {}).drainSeconds).toBe(0);
        expect(() => loadConfig(["--drain-seconds", "1.5"], {})).toThrow('drain-seconds must be an integer from 0 to 3600, got "1.5"');
        expect(() => loadConfig([], {DRAIN_SECONDS: "-1"})).toThrow("drain-seconds must be an integer");
    });

    it("a flag wins over its environment variable", () => {
        const env = {HOST: "0.0.0.0", PORT: "9000", MODELS_CONFIG: "/env/models.json", THREADS: "3", PARALLEL: "2",
            QUEUE_SIZE: "5", API_KEYS_FILE: "/env/keys.json", BODY_LIMIT: "1mb"};
        const config = loadConfig([
            "--host", "::1", "--port", "0", "--models", "/flag/models.json", "--threads", "2", "--parallel", "8",
            "--queue-size", "7", "--keys-file", "/flag/keys.json", "--body-limit", "2mb"
        ], env);
        expect(config).toMatchObject({
            host: "::1", port: 0, modelsConfig: "/flag/models.json", threads: 2, parallel: 8, queueSize: 7,
            apiKeysFile: "/flag/keys.json", bodyLimit: "2mb"
        });
    });

    it("chat runtime settings: flash attention, prompt cache and llama.cpp build, flag over env, checked", () => {
        expect(defaultConfig).toMatchObject({flashAttention: "auto", promptCache: "on", llamaBuild: "auto"});
        expect(loadConfig(["--flash-attention", "on", "--prompt-cache", "off", "--llama-build", "native"],
            {FLASH_ATTENTION: "off", PROMPT_CACHE: "on", LLAMA_BUILD: "prebuilt"}))
            .toMatchObject({flashAttention: "on", promptCache: "off", llamaBuild: "native"});
        expect(loadConfig([], {FLASH_ATTENTION: "AUTO", PROMPT_CACHE: "Exact"})).toMatchObject({flashAttention: "auto", promptCache: "exact"});
        expect(configErrorOf(["--flash-attention", "yes"])).toBe('flash-attention must be one of on, off, auto, got "yes"');
        expect(configErrorOf([], {PROMPT_CACHE: "1"})).toBe('prompt-cache must be one of on, exact, off, got "1"');
        expect(configErrorOf([], {LLAMA_BUILD: "cuda"})).toBe('llama-build must be one of auto, native, prebuilt, got "cuda"');
        expect(configErrorOf(["--flash-attention", ""])).toBe("--flash-attention needs a value");
    });

    it("--workers wins over WORKERS; both are range-checked", () => {
        expect(loadConfig(["--workers", "4"], {WORKERS: "3"}).workers).toBe(4);
        expect(() => loadConfig(["--workers", "0"], {})).toThrow(ConfigError);
        expect(() => loadConfig([], {WORKERS: "65"})).toThrow(ConfigError);
        expect(() => loadConfig([], {ONNX_THREADS: "x"})).toThrow(ConfigError);
    });

    it("--embed-workers and EMBED_WORKERS still work, with a deprecation warning; the new names win", () => {
        const fromFlag = loadStartOptions(["--embed-workers", "3"], {});
        expect(fromFlag.config.workers).toBe(3);
        expect(fromFlag.warnings).toEqual(["--embed-workers is deprecated: the worker pool runs every ONNX model now; use --workers."]);
        const fromEnv = loadStartOptions([], {EMBED_WORKERS: "5"});
        expect(fromEnv.config.workers).toBe(5);
        expect(fromEnv.warnings).toEqual(["EMBED_WORKERS is deprecated: the worker pool runs every ONNX model now; use WORKERS."]);
        expect(loadStartOptions([], {EMBED_WORKERS: "5", WORKERS: "2"}).config.workers).toBe(2);
        expect(loadStartOptions([], {}).warnings).toEqual([]);
    });

    it("accepts the --flag=value form", () => {
        expect(loadConfig(["--port=1234"], {}).port).toBe(1234);
    });

    it("ignores empty or blank environment variables and trims the others", () => {
        const config = loadConfig([], {PORT: "", HOST: "   ", THREADS: " 2 ", LOG_LEVEL: ""});
        expect(config.port).toBe(8080);
        expect(config.host).toBe("127.0.0.1");
        expect(config.threads).toBe(2);
        expect(config.logLevel).toBe("info");
    });

    it("resolves relative paths to absolute ones against the working directory", () => {
        const config = loadConfig(["--models", "conf/m.json"], {API_KEYS_FILE: "../keys.json"});
        expect(config.modelsConfig).toBe(path.join(process.cwd(), "conf/m.json"));
        expect(config.apiKeysFile).toBe(path.resolve(process.cwd(), "../keys.json"));
    });

    it("splits API_KEYS on commas, trims them and drops empty entries", () => {
        expect(loadConfig([], {API_KEYS: " sk-a , sk-b,,  ,sk-c "}).apiKeys).toEqual(["sk-a", "sk-b", "sk-c"]);
        expect(loadConfig([], {API_KEYS: " , "}).apiKeys).toEqual([]);
        expect(loadConfig([], {API_KEYS: ""}).apiKeys).toEqual([]);
    });

    it.each([
        ["--port", "PORT", "port", "65536"],
        ["--port", "PORT", "port", "-1"],
        ["--port", "PORT", "port", "80.5"],
        ["--port", "PORT", "port", "http"],
        ["--threads", "THREADS", "threads", "0"],
        ["--threads", "THREADS", "threads", "257"],
        ["--parallel", "PARALLEL", "parallel", "0"],
        ["--parallel", "PARALLEL", "parallel", "65"],
        ["--queue-size", "QUEUE_SIZE", "queue-size", "-3"],
        ["--queue-size", "QUEUE_SIZE", "queue-size", "many"]
    ])("%s / %s = %s... rejects %s with a ConfigError naming the setting", (flag, envName, name, value) => {
        // `--port=-1`: parseArgs would read `--port -1` as a flag missing its value.
        for (const message of [configErrorOf([`${flag}=${value}`]), configErrorOf([], {[envName]: value})]) {
            expect(message).toContain(name);
            expect(message).toContain(`"${value}"`);
        }
    });

    it.each([
        ["SSE_PING_MS", "9"],
        ["SSE_PING_MS", "1s"],
        ["SHUTDOWN_TIMEOUT_MS", "-1"],
        ["SHUTDOWN_TIMEOUT_MS", "3600001"]
    ])("%s=%s is a ConfigError naming the setting", (envName, value) => {
        const message = configErrorOf([], {[envName]: value});
        expect(message).toContain(envName);
        expect(message).toContain(`"${value}"`);
    });

    it("an empty flag value is an error, not port 0 or queue size 0", () => {
        // Number("") is 0: `--port=$PORT` with PORT unset would silently bind a random port.
        expect(configErrorOf(["--port="])).toContain("port");
        expect(configErrorOf(["--queue-size="])).toContain("queue-size");
    });

    it("the error gives the allowed range", () => {
        expect(configErrorOf(["--port", "70000"])).toBe('port must be an integer from 0 to 65535, got "70000"');
    });

    it("accepts the range limits", () => {
        expect(loadConfig(["--port", "65535", "--threads", "256", "--parallel", "64", "--queue-size", "100000"], {
            SSE_PING_MS: "10", SHUTDOWN_TIMEOUT_MS: "3600000"
        })).toMatchObject({port: 65535, threads: 256, parallel: 64, queueSize: 100_000, ssePingMs: 10, shutdownTimeoutMs: 3_600_000});
    });

    it("throws on an unknown flag; a positional argument is a model file or folder to serve", () => {
        expect(() => loadConfig(["--prot", "80"], {})).toThrow(/--prot/);
        expect(loadConfig(["serve.gguf"], {}).modelPaths).toEqual([path.resolve("serve.gguf")]);
    });

    it("a positional .json file is the manifest, as --models takes it (it was refused as 'not a model'), and is given alone", () => {
        expect(loadConfig(["conf/my-models.json"], {MODELS_CONFIG: "/env/models.json"})).toMatchObject({modelsConfig: path.resolve("conf/my-models.json"), modelPaths: []});
        expect(loadConfig(["--port", "0", "/etc/MODELS.JSON"], {})).toMatchObject({modelsConfig: "/etc/MODELS.JSON", modelPaths: [], port: 0});
        expect(configErrorOf(["my-models.json", "chat.gguf"])).toBe("my-models.json is a model manifest, and one is served alone: " +
            "give it as the only path (`npm start -- my-models.json`, or `--models my-models.json`), without chat.gguf.");
        expect(configErrorOf(["--models", "other.json", "my-models.json"])).toBe("my-models.json is a model manifest, and one is served alone: " +
            "give it as the only path (`npm start -- my-models.json`, or `--models my-models.json`), without --models other.json.");
    });

    it("throws when a flag misses its value", () => {
        expect(() => loadConfig(["--port"], {})).toThrow();
    });

    it("command-line mistakes are ConfigErrors, so main.ts prints a message instead of a stack trace", () => {
        expect(configErrorOf(["--prot", "80"])).toContain("--prot");
        expect(configErrorOf(["--port"])).toContain("--port");
    });

    it.each(["silent", "error", "warn", "info", "debug"])("LOG_LEVEL=%s is accepted", (level) => {
        expect(loadConfig([], {LOG_LEVEL: level}).logLevel).toBe(level);
    });

    it.each(["verbose", "INFO", "2"])("LOG_LEVEL=%s is a ConfigError listing the levels", (level) => {
        const message = configErrorOf([], {LOG_LEVEL: level});
        expect(message).toContain("LOG_LEVEL");
        expect(message).toContain("silent, error, warn, info, debug");
        expect(message).toContain(`"${level}"`);
    });
});
