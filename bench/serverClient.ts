import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { readSseEvents } from "./readSseEvents.js";
import { serverEnvironment } from "./serverEnvironment.js";
import type { GenerationSettings, RunResult, StreamTiming } from "./stats.js";

const requestTimeoutMs = 120_000;

/** Children still alive; killed on any way out of the bench process. */
const liveChildren = new Set<ChildProcess>();
let exitHooksInstalled = false;

function installExitHooks() {
    if (exitHooksInstalled)
        return;
    exitHooksInstalled = true;
    process.on("exit", () => {
        for (const child of liveChildren)
            child.kill("SIGKILL");
    });
    for (const signal of ["SIGINT", "SIGTERM"] as const)
        process.once(signal, () => {
            for (const child of liveChildren)
                child.kill("SIGKILL");
            process.exit(130);
        });
}

/** Checkouts whose compiled server is known current (built at most once per bench run). */
const built = new Set<string>();

/**
 * How to run the server of the checkout at `cwd`: its compiled server, as `npm start` runs it (built first by its own
 * scripts/buildIfStale.mjs when stale), so a bench measures what users run (the source through tsx also carries the
 * loader and a larger heap); a checkout from before that script runs its source through tsx.
 */
function serverEntry(cwd: string): string[] {
    const build = path.join(cwd, "scripts", "buildIfStale.mjs");
    if (!fs.existsSync(build))
        return ["--import", "tsx", "src/main.ts"];
    if (!built.has(cwd)) {
        const result = spawnSync(process.execPath, [build], {cwd, stdio: ["ignore", "inherit", "inherit"]});
        if (result.status !== 0)
            throw new Error(`Building the server in ${cwd} failed (${result.status ?? result.signal}).`);
        built.add(cwd);
    }
    return ["dist/src/main.js"];
}

export type ServerOptions = {
    cwd: string;
    manifestPath: string;
    /** A keys file that does not exist, so auth is off (loopback) whatever the project folder holds. */
    keysFile: string;
    threads: number;
    parallel: number;
    startTimeoutMs: number;
    /** More flags for the server (e.g. `--speculative off`). */
    extraArgs?: string[];
};

/** The server under test, as a child process on a loopback port picked by the OS. */
export class BenchServer {
    private output = "";

    private constructor(private readonly child: ChildProcess, readonly baseUrl: string) {}

    get pid(): number {
        return this.child.pid!;
    }

    get commandLine(): string {
        return this.child.spawnargs.slice(1).join(" ");
    }

    static async start(options: ServerOptions): Promise<BenchServer> {
        installExitHooks();
        const env = serverEnvironment({LOG_LEVEL: "warn"});
        delete env.API_KEYS;
        delete env.API_KEYS_FILE;
        const child = spawn(process.execPath, [
            ...serverEntry(options.cwd),
            "--models", options.manifestPath,
            "--host", "127.0.0.1",
            "--port", "0",
            "--threads", String(options.threads),
            "--parallel", String(options.parallel),
            "--keys-file", options.keysFile,
            ...options.extraArgs ?? []
        ], {cwd: options.cwd, env, stdio: ["ignore", "pipe", "pipe"]});
        liveChildren.add(child);
        child.once("exit", () => liveChildren.delete(child));

        let output = "";
        child.stdout!.setEncoding("utf8").on("data", (text: string) => output += text);
        child.stderr!.setEncoding("utf8").on("data", (text: string) => output += text);
        try {
            const baseUrl = await waitFor(options.startTimeoutMs, "the server's 'listening on' line", () => {
                if (child.exitCode != null)
                    throw new Error(`The server exited with code ${child.exitCode}:\n${output}`);
                return /listening on (http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(output)?.[1];
            });
            await waitFor(options.startTimeoutMs, "GET /health = 200", async () => {
                if (child.exitCode != null)
                    throw new Error(`The server exited with code ${child.exitCode}:\n${output}`);
                const response = await fetch(`${baseUrl}/health`, {signal: AbortSignal.timeout(2000)}).catch(() => null);
                await response?.body?.cancel();
                return response?.status === 200 ? true : undefined;
            });
            const server = new BenchServer(child, baseUrl);
            child.stdout!.on("data", (text: string) => server.output += text);
            child.stderr!.on("data", (text: string) => server.output += text);
            return server;
        } catch (error) {
            child.kill("SIGKILL");
            throw error;
        }
    }

    /** `streams` concurrent SSE requests, request `i` with seed `seed + i`. */
    async run(streams: number, settings: GenerationSettings): Promise<RunResult> {
        const start = performance.now();
        const results = await Promise.all(Array.from({length: streams}, (_, index) =>
            this.streamChat({...settings, seed: settings.seed + index}, start)));
        return {start, streams: results};
    }

    /** One streamed chat completion (readSseEvents). */
    async streamChat(settings: GenerationSettings, start = performance.now()): Promise<StreamTiming> {
        const response = await fetch(`${this.baseUrl}/v1/chat/completions`, {
            method: "POST",
            // Bounded: no benchmark stream may hang the bench.
            signal: AbortSignal.timeout(requestTimeoutMs),
            headers: {"Content-Type": "application/json"},
            body: JSON.stringify({
                model: "bench",
                messages: [{role: "user", content: settings.prompt}],
                stream: true,
                stream_options: {include_usage: true},
                max_tokens: settings.maxTokens,
                temperature: settings.temperature,
                top_p: settings.topP,
                seed: settings.seed,
                logit_bias: {[String(settings.eosToken)]: -100},
                ...(settings.topLogprobs == null ? {} : {logprobs: true, top_logprobs: settings.topLogprobs})
            })
        });
        if (response.status !== 200 || response.body == null)
            throw new Error(`POST /v1/chat/completions: ${response.status} ${await response.text()}`);

        let firstToken = NaN;
        let end = NaN;
        let text = "";
        let completionTokens = -1;
        let promptTokens = -1;
        let done = false;
        for await (const {data, receivedAt} of readSseEvents(response.body)) {
            if (data === "[DONE]") {
                done = true;
                break;
            }
            const chunk = data as {
                choices: {delta: {content?: string}, finish_reason: string | null}[],
                usage?: {prompt_tokens: number, completion_tokens: number} | null
            };
            const choice = chunk.choices[0];
            const content = choice?.delta.content;
            if (content != null && content !== "") {
                if (text === "")
                    firstToken = receivedAt;
                text += content;
            }
            if (choice?.finish_reason != null)
                end = receivedAt;
            if (chunk.usage != null) {
                completionTokens = chunk.usage.completion_tokens;
                promptTokens = chunk.usage.prompt_tokens;
            }
        }
        if (!done || completionTokens < 0)
            throw new Error("The stream ended without usage or [DONE]");
        return {start, firstToken, end, completionTokens, promptTokens, text};
    }

    /** VmRSS and VmHWM (peak) of the server process, in MiB. */
    memory(): {rssMiB: number, peakMiB: number} {
        const status = fs.readFileSync(`/proc/${this.pid}/status`, "utf8");
        const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
        return {rssMiB: kib("VmRSS") / 1024, peakMiB: kib("VmHWM") / 1024};
    }

    /** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
    async stop(graceMs = 5000) {
        if (this.child.exitCode != null || this.child.signalCode != null)
            return;
        const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
        this.child.kill("SIGTERM");
        const timer = setTimeout(() => this.child.kill("SIGKILL"), graceMs);
        await exited;
        clearTimeout(timer);
    }

    /** The server's own output since it became ready (warnings and errors only, LOG_LEVEL=warn). */
    get log(): string {
        return this.output;
    }
}

async function waitFor<T>(timeoutMs: number, what: string, probe: () => T | undefined | Promise<T | undefined>): Promise<T> {
    const stepMs = 50;
    for (let waited = 0; waited < timeoutMs; waited += stepMs) {
        const value = await probe();
        if (value != null)
            return value;
        await new Promise((resolve) => setTimeout(resolve, stepMs));
    }
    throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
}
