import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import OpenAI from "openai";
import { defaultConfig, type Config } from "../../src/config.js";
import { createLogger } from "../../src/logger.js";
import type { Capability } from "../../src/capabilities/Capability.js";
import { startServer, type EngineFactories, type RunningServer, type ServerOptions } from "../../src/startServer.js";

export type TestServer = RunningServer & {
    dir: string;
    client: OpenAI;
    /** POST JSON (or a raw string body) to a /v1 path with fetch. */
    post(pathName: string, body: unknown, init?: RequestInit): Promise<Response>;
    stop(): Promise<void>;
};

export type TestServerOptions = {
    models: Record<string, unknown>[];
    config?: Partial<Config>;
    apiKey?: string;
    factories?: EngineFactories;
    capabilities?: readonly Capability[];
    /** Bytes each model is estimated to take (see estimateModelBytes); default with `factories`: 1 MB each, as fake engines take nothing. */
    estimateBytes?: ServerOptions["estimateBytes"];
    clock?: ServerOptions["clock"];
    /** POST /models/pull's hub, catalogue and resume delay (the management API's tests: a loopback hub). */
    pull?: Pick<ServerOptions, "hub" | "catalogue" | "pullRetryDelayMs">;
    waitUntilReady?: boolean;
    /** Receives the server's log lines (at `config.logLevel`, default silent). */
    logLines?: string[];
};

/** Starts the real server in-process on a free loopback port with a manifest written to a temp dir. */
export async function startTestServer(options: TestServerOptions): Promise<TestServer> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "los-test-"));
    const manifest = path.join(dir, "models.json");
    fs.writeFileSync(manifest, JSON.stringify({models: options.models}));
    const config: Config = {
        ...defaultConfig,
        // Tests never depend on the machine's GPU stack (a software Vulkan device, a real GPU): GGUF models run on the CPU.
        gpu: "off",
        port: 0,
        modelsConfig: manifest,
        apiKeysFile: path.join(dir, "api-keys.json"),
        // Saved prompt caches go to the test's folder, removed with it.
        cacheDir: path.join(dir, "cache"),
        logLevel: process.env.TEST_LOG_LEVEL as Config["logLevel"] ?? "silent",
        // Most tests are about a loaded model: they get it loaded at start, as before the model library.
        // The library's own tests (modelLibrary.test.ts) turn this off.
        preloadAll: true,
        ...options.config
    };
    const logger = options.logLines != null ? createLogger(config.logLevel, (line) => options.logLines!.push(line)) : createLogger(config.logLevel);
    let server: RunningServer;
    try {
        server = await startServer(config, logger, {
            factories: options.factories, capabilities: options.capabilities, clock: options.clock, ...options.pull,
            estimateBytes: options.estimateBytes ?? (options.factories != null ? async () => 1024 ** 2 : undefined)
        });
    } catch (error) {
        // A server that does not start (the tests of bad manifests) leaves no folder behind either.
        fs.rmSync(dir, {recursive: true, force: true});
        throw error;
    }
    if (options.waitUntilReady !== false)
        try {
            await server.ready;
        } catch (error) {
            // A model that fails to preload (a template the model cannot load with): the server closed, its folder removed.
            await server.close();
            fs.rmSync(dir, {recursive: true, force: true});
            throw error;
        }
    const client = new OpenAI({baseURL: `${server.url}/v1`, apiKey: options.apiKey ?? "unused", maxRetries: 0});
    return {
        ...server,
        dir,
        client,
        post: (pathName, body, init) => fetch(`${server.url}${pathName}`, {
            method: "POST",
            headers: {"Content-Type": "application/json", ...(options.apiKey ? {Authorization: `Bearer ${options.apiKey}`} : {})},
            body: typeof body === "string" ? body : JSON.stringify(body),
            ...init
        }),
        stop: async () => {
            await server.close();
            fs.rmSync(dir, {recursive: true, force: true});
        }
    };
}

/** Reads a whole SSE response into its events (`data` lines and comments). */
export async function readSse(response: Response): Promise<{events: {event?: string, data: string}[], comments: string[], raw: string}> {
    const raw = await response.text();
    const events: {event?: string, data: string}[] = [];
    const comments: string[] = [];
    for (const block of raw.split("\n\n").filter((part) => part !== "")) {
        let event: string | undefined;
        const data: string[] = [];
        for (const line of block.split("\n")) {
            if (line.startsWith(":")) comments.push(line);
            else if (line.startsWith("event: ")) event = line.slice(7);
            else if (line.startsWith("data: ")) data.push(line.slice(6));
        }
        if (data.length > 0)
            events.push({event, data: data.join("\n")});
    }
    return {events, comments, raw};
}

/** `response.json()` typed loosely, for assertions on response bodies. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function jsonOf(response: Response): Promise<any> {
    return response.json();
}
