/**
 * `npm run bench:chat [-- --runs N] [--tokens N] [--quick] [--idle-wait S]`
 *
 * Raw node-llama-cpp versus the same generation through the server's HTTP + SSE API, for the
 * same model, threads, prompt tokens, seed, temperature and max_tokens. The raw side runs in this
 * process, the server as a child process; both have the model loaded, but only one of them
 * generates at any time (2-core machine): their runs alternate.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { bench50mbOptions, makeTestLlamaGguf } from "../test/support/gguf/makeTestLlamaGguf.js";
import { CpuMeter, waitForIdleMachine, type CpuReport } from "./cpuAccounting.js";
import { loadRawLlama, RawLlama } from "./rawLlama.js";
import { BenchServer } from "./serverClient.js";
import {
    aggregateTokensPerSecond, assertFixedLength, decodeTokensPerSecond, fixed, median, timeToFirstTokenMs,
    type GenerationSettings, type RunResult, type StreamTiming
} from "./stats.js";

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const parallel = 4;
const concurrencies = [1, 2, 4] as const;
const maxContextSize = 2048;
const temperature = 0.8;
const topP = 1;
const seed = 42;

// Acceptance criteria.
const targetDecodeRatio = 0.95;
const targetTtftOverheadMs = 10;
const targetConcurrencyGain = 2;
const targetLogprobsCost = 1.5;

type BenchModel = {name: string, path: string, prompt: string, note: string, generate?: boolean, gateConcurrency: boolean};

const benchModels: BenchModel[] = [
    {
        name: "stories260K",
        path: "models/demo/stories260K.gguf",
        prompt: "Once upon a time, there was a little girl named Lily. She",
        note: "real 260K-param model, no chat template",
        gateConcurrency: false
    },
    {
        name: "bench50mb",
        path: path.join(projectRoot, "test/.models/bench50mb.gguf"),
        prompt: "Tell me a story about a cat and a dog.",
        note: "generated random-weight ~50 MB F32 llama, ChatML template",
        generate: true,
        gateConcurrency: true
    }
];

type Options = {runs: number, tokens: number, quick: boolean, idleWait: number, threads: number};

function parseOptions(): Options {
    const {values} = parseArgs({
        args: process.argv.slice(2),
        strict: true,
        options: {
            runs: {type: "string"},
            tokens: {type: "string"},
            quick: {type: "boolean", default: false},
            "idle-wait": {type: "string"},
            threads: {type: "string"},
            help: {type: "boolean", default: false}
        }
    });
    if (values.help) {
        console.log("usage: npm run bench:chat -- [--runs N (default 5)] [--tokens N (default 128)] [--quick (runs 2, tokens 48)]\n" +
            "       [--threads N (default 1, the server's default: compare with 2 to see why)]\n" +
            "       [--idle-wait S (default 30): before each side, wait up to S seconds for other processes to go idle; 0 = don't]");
        process.exit(0);
    }
    const positive = (raw: string | undefined, name: string, fallback: number, max: number, min = 1) => {
        if (raw == null)
            return fallback;
        const value = Number(raw);
        if (!Number.isInteger(value) || value < min || value > max)
            throw new Error(`--${name} must be an integer from ${min} to ${max}, got "${raw}"`);
        return value;
    };
    const quick = values.quick;
    return {
        quick,
        runs: positive(values.runs, "runs", quick ? 2 : 5, 50),
        // At least 2: decode speed is measured over the tokens after the first.
        tokens: Math.max(2, positive(values.tokens, "tokens", quick ? 48 : 128, 1024)),
        idleWait: positive(values["idle-wait"], "idle-wait", 30, 600, 0),
        threads: positive(values.threads, "threads", 1, 64)
    };
}

/** Every figure for one side (raw or server) of one model. */
type SideFigures = {
    decodeTps: number;
    ttftMs: number;
    aggregateTps: Record<number, number>;
    /** Completion texts of the last measured run per concurrency, to check both sides sampled the same. */
    texts: Record<number, string[]>;
    /** CPU used during the measured runs per concurrency, and the tokens they generated. */
    cpu: Record<number, CpuReport & {tokens: number}>;
};

type Runner = (streams: number, settings: GenerationSettings) => Promise<RunResult>;

/**
 * For each concurrency: one warm-up run per side (not counted), then `runs` measured runs per
 * side, the sides alternating run by run (and swapping who goes first), so a change in the
 * machine's background load hits both sides alike instead of skewing their ratio.
 */
async function measureInterleaved(sides: {raw: Runner, server: Runner}, serverPid: number, settings: GenerationSettings, options: Options, what: string) {
    const names = ["raw", "server"] as const;
    const figures = {raw: emptyFigures(), server: emptyFigures()};
    for (const streams of concurrencies) {
        for (const name of names)
            assertFixedLength(await sides[name](streams, settings), settings.maxTokens, `${what} ${name} warm-up, ${streams} streams`);
        const samples = {raw: {decode: [] as number[], ttft: [] as number[], aggregate: [] as number[]}, server: {decode: [] as number[], ttft: [] as number[], aggregate: [] as number[]}};
        for (let index = 0; index < options.runs; index++) {
            for (const name of index % 2 === 0 ? names : [...names].reverse()) {
                const meter = new CpuMeter(serverPid);
                const result = await sides[name](streams, settings);
                addCpu(figures[name], streams, meter.stop(), streams * settings.maxTokens);
                assertFixedLength(result, settings.maxTokens, `${what} ${name}, ${streams} streams`);
                samples[name].aggregate.push(aggregateTokensPerSecond(result));
                if (streams === 1) {
                    samples[name].decode.push(decodeTokensPerSecond(result.streams[0]));
                    samples[name].ttft.push(timeToFirstTokenMs(result.streams[0]));
                }
                figures[name].texts[streams] = result.streams.map((stream) => stream.text);
            }
        }
        for (const name of names) {
            figures[name].aggregateTps[streams] = median(samples[name].aggregate);
            if (streams === 1) {
                figures[name].decodeTps = median(samples[name].decode);
                figures[name].ttftMs = median(samples[name].ttft);
            }
        }
    }
    return figures;
}

function emptyFigures(): SideFigures {
    return {decodeTps: NaN, ttftMs: NaN, aggregateTps: {}, texts: {}, cpu: {}};
}

function addCpu(figures: SideFigures, streams: number, report: CpuReport, tokens: number) {
    const sum = figures.cpu[streams] ??= {wallMs: 0, selfMs: 0, childMs: 0, othersMs: 0, tokens: 0};
    sum.wallMs += report.wallMs;
    sum.selfMs += report.selfMs;
    sum.childMs += report.childMs;
    sum.othersMs += report.othersMs;
    sum.tokens += tokens;
}

/**
 * One streamed request with `logprobs: true, top_logprobs: 5` against the same request without,
 * alternating (and swapping who goes first), after one warm-up each: medians of the whole request
 * time, and whether both sampled the same text (logprobs must not change sampling).
 */
async function measureLogprobsCost(server: BenchServer, settings: GenerationSettings, options: Options) {
    const withLogprobs = {...settings, topLogprobs: 5};
    const time = async (s: GenerationSettings) => {
        const stream = await server.streamChat(s);
        return {ms: stream.end - stream.start, text: stream.text};
    };
    await time(settings);
    await time(withLogprobs);
    const plain: number[] = [];
    const logprobs: number[] = [];
    let same = true;
    for (let index = 0; index < options.runs; index++) {
        const order = index % 2 === 0 ? [false, true] : [true, false];
        const texts: string[] = [];
        for (const withThem of order) {
            const result = await time(withThem ? withLogprobs : settings);
            (withThem ? logprobs : plain).push(result.ms);
            texts.push(result.text);
        }
        same &&= texts[0] === texts[1];
    }
    return {plainMs: median(plain), logprobsMs: median(logprobs), same};
}

/** Diagnostic: the server's generateChoice in-process (no HTTP), single stream. */
async function measureGenerateChoice(raw: RawLlama, settings: GenerationSettings, options: Options) {
    const runs: StreamTiming[] = [];
    await raw.runGenerateChoice(settings);
    for (let index = 0; index < options.runs; index++)
        runs.push(await raw.runGenerateChoice(settings));
    return {decodeTps: median(runs.map(decodeTokensPerSecond)), ttftMs: median(runs.map(timeToFirstTokenMs))};
}

type ModelReport =
    | {model: BenchModel, skipped: string}
    | {
        model: BenchModel, skipped?: undefined,
        contextSize: number, promptTokens: number,
        raw: SideFigures, server: SideFigures, engine: {decodeTps: number, ttftMs: number},
        logprobs: {plainMs: number, logprobsMs: number, same: boolean},
        /** Raw side: generation tokens per llama_decode call, by concurrency. */
        tokensPerBatch: Record<number, number>,
        rawProcessRssMiB: number, serverMemory: {rssMiB: number, peakMiB: number},
        serverLog: string
    };

async function benchModel(model: BenchModel, options: Options, llama: Awaited<ReturnType<typeof loadRawLlama>>, tmpDir: string): Promise<ModelReport> {
    if (model.generate) {
        fs.mkdirSync(path.dirname(model.path), {recursive: true});
        await makeTestLlamaGguf(model.path, bench50mbOptions);
    }
    if (!fs.existsSync(model.path))
        return {model, skipped: `${model.path} not found`};

    log(`${model.name}: loading the model in-process and in the server`);
    const raw = await RawLlama.load(llama, model.path, {maxContextSize, threads: options.threads, sequences: parallel});
    let server: BenchServer | undefined;
    try {
        const contextSize = raw.contextSize;
        const promptTokens = raw.promptTokens(model.prompt).length;
        if (promptTokens + options.tokens > contextSize)
            throw new Error(`${model.name}: ${promptTokens} prompt + ${options.tokens} tokens do not fit the context (${contextSize})`);
        const eosToken = raw.model.tokens.eos;
        if (eosToken == null)
            throw new Error(`${model.name} has no EOS token`);
        const settings = generationSettings(model, options, eosToken);

        const manifestPath = path.join(tmpDir, `${model.name}.models.json`);
        fs.writeFileSync(manifestPath, JSON.stringify({models: [{id: "bench", task: "chat", path: model.path, contextSize}]}));
        server = await BenchServer.start({
            cwd: projectRoot,
            manifestPath,
            keysFile: path.join(tmpDir, "no-api-keys.json"),
            threads: options.threads,
            parallel,
            startTimeoutMs: 60_000
        });
        const first = await server.streamChat(settings);
        if (first.promptTokens !== promptTokens)
            throw new Error(`${model.name}: the server rendered ${first.promptTokens} prompt tokens, the raw side ${promptTokens}`);

        await settle(options, model.name);
        log(`${model.name}: generateChoice in-process (diagnostic)`);
        const engine = await measureGenerateChoice(raw, settings, options);
        log(`${model.name}: raw node-llama-cpp and server (HTTP + SSE), run by run`);
        const tokensPerBatch: Record<number, number> = {};
        for (const streams of concurrencies) {
            const counted = await raw.countBatches(streams, settings);
            tokensPerBatch[streams] = counted == null ? NaN : counted.tokens / counted.batches;
        }
        const running = server;
        const figures = await measureInterleaved({
            raw: (streams, s) => raw.run(streams, s),
            server: (streams, s) => running.run(streams, s)
        }, server.pid, settings, options, model.name);
        log(`${model.name}: server request with and without logprobs + top_logprobs 5, run by run`);
        const logprobs = await measureLogprobsCost(server, settings, options);
        return {
            model, contextSize, promptTokens, raw: figures.raw, server: figures.server, engine, tokensPerBatch, logprobs,
            rawProcessRssMiB: process.memoryUsage().rss / 2 ** 20,
            serverMemory: server.memory(), serverLog: server.log.trim()
        };
    } finally {
        await server?.stop();
        await raw.dispose();
    }
}

function generationSettings(model: BenchModel, options: Options, eosToken: number): GenerationSettings {
    return {prompt: model.prompt, maxTokens: options.tokens, temperature, topP, seed, eosToken};
}

function verdict(pass: boolean) {
    return pass ? "PASS" : "FAIL";
}

function report(reports: ModelReport[], options: Options) {
    const rows: string[][] = [];
    const notes: string[] = [];
    for (const entry of reports) {
        if (entry.skipped != null) {
            rows.push([entry.model.name, `skipped (${entry.skipped})`, "", "", "", ""]);
            continue;
        }
        const {raw, server} = entry;
        const name = `${entry.model.name} (ctx ${entry.contextSize}, prompt ${entry.promptTokens} tok)`;
        const decodeRatio = server.decodeTps / raw.decodeTps;
        const ttftOverhead = server.ttftMs - raw.ttftMs;
        rows.push([name, "decode tok/s, 1 stream", fixed(raw.decodeTps), fixed(server.decodeTps), fixed(decodeRatio, 2),
            `>= ${targetDecodeRatio}: ${verdict(decodeRatio >= targetDecodeRatio)}`]);
        rows.push(["", "TTFT ms (median)", fixed(raw.ttftMs), fixed(server.ttftMs), fixed(server.ttftMs / raw.ttftMs, 2),
            `+${fixed(ttftOverhead)} ms, <= ${targetTtftOverheadMs}: ${verdict(ttftOverhead <= targetTtftOverheadMs)}`]);
        for (const streams of concurrencies)
            rows.push(["", `aggregate tok/s, ${streams} stream${streams > 1 ? "s" : ""}`, fixed(raw.aggregateTps[streams]),
                fixed(server.aggregateTps[streams]), fixed(server.aggregateTps[streams] / raw.aggregateTps[streams], 2), ""]);
        const rawGain = raw.aggregateTps[4] / raw.aggregateTps[1];
        const serverGain = server.aggregateTps[4] / server.aggregateTps[1];
        rows.push(["", "4 streams / 1 stream", `${fixed(rawGain, 2)}x`, `${fixed(serverGain, 2)}x`, fixed(serverGain / rawGain, 2),
            entry.model.gateConcurrency ? `server >= ${targetConcurrencyGain}x: ${verdict(serverGain >= targetConcurrencyGain)}` : "(info)"]);
        const logprobsCost = entry.logprobs.logprobsMs / entry.logprobs.plainMs;
        rows.push(["", "request ms, 1 stream: logprobs + top_logprobs 5 / without", "",
            `${fixed(entry.logprobs.logprobsMs)} / ${fixed(entry.logprobs.plainMs)}`, fixed(logprobsCost, 2),
            `<= ${targetLogprobsCost}: ${verdict(logprobsCost <= targetLogprobsCost)}${entry.logprobs.same ? "" : " (SAMPLED TEXT DIFFERED)"}`]);
        rows.push(["", "resident memory MiB", `${fixed(entry.rawProcessRssMiB, 0)} (whole bench process)`,
            `${fixed(entry.serverMemory.rssMiB, 0)} (peak ${fixed(entry.serverMemory.peakMiB, 0)})`, "", "VmRSS of the server child"]);

        const same = (streams: number) => raw.texts[streams].filter((text, index) => text === server.texts[streams][index]).length;
        notes.push(`- ${entry.model.name}: identical completions raw vs server (same seeds): ` +
            concurrencies.map((streams) => `${streams} stream${streams > 1 ? "s" : ""} ${same(streams)}/${streams}`).join(", ") +
            `. In-process generateChoice (server engine, no HTTP): decode ${fixed(entry.engine.decodeTps)} tok/s ` +
            `(${fixed(entry.engine.decodeTps / raw.decodeTps, 2)}x raw), TTFT ${fixed(entry.engine.ttftMs)} ms ` +
            `(+${fixed(entry.engine.ttftMs - raw.ttftMs)} ms over raw).`);
        const perToken = (cpu: CpuReport & {tokens: number}, ms: number) => fixed(ms / cpu.tokens, 2);
        const cores = (cpu: CpuReport) => fixed(cpu.othersMs / cpu.wallMs, 2);
        const byStreams = (pick: (streams: number) => string) => concurrencies.map(pick).join(" / ");
        notes.push(`- ${entry.model.name}: CPU ms per generated token for ${concurrencies.join(" / ")} streams: ` +
            `raw process ${byStreams((n) => perToken(raw.cpu[n], raw.cpu[n].selfMs))}; ` +
            `server process ${byStreams((n) => perToken(server.cpu[n], server.cpu[n].childMs))} ` +
            `+ bench client ${byStreams((n) => perToken(server.cpu[n], server.cpu[n].selfMs))}. ` +
            `Other processes kept ${byStreams((n) => cores(raw.cpu[n]))} cores busy during the raw runs and ` +
            `${byStreams((n) => cores(server.cpu[n]))} during the server runs (should be ~0).`);
        const busiest = Math.max(...concurrencies.flatMap((n) => [raw.cpu[n], server.cpu[n]].map((cpu) => cpu.othersMs / cpu.wallMs)));
        if (busiest > 0.2)
            idleWarnings.push(`${entry.model.name}: other processes used up to ${fixed(busiest, 2)} cores during the measured runs`);
        notes.push(`- ${entry.model.name}: raw node-llama-cpp, tokens per llama_decode batch while generating with ${concurrencies.join(" / ")} ` +
            `streams: ${byStreams((n) => fixed(entry.tokensPerBatch[n], 2))} (ideal ${concurrencies.join(" / ")}).`);
        if (entry.serverLog !== "")
            notes.push(`- ${entry.model.name}: server output during the runs:\n\n${entry.serverLog.split("\n").map((line) => `    ${line}`).join("\n")}`);
    }

    const header = ["model", "figure", "raw node-llama-cpp", "server (HTTP+SSE)", "server/raw", "target"];
    console.log("");
    console.log(`| ${header.join(" | ")} |`);
    console.log(`|${header.map(() => "---").join("|")}|`);
    for (const row of rows)
        console.log(`| ${row.join(" | ")} |`);
    console.log("");
    console.log(`Medians of ${options.runs} runs per side after 1 warm-up run, raw and server runs alternating; ${options.tokens} completion tokens per stream (EOS banned with ` +
        `logit_bias -100 on both sides), temperature ${temperature}, top_p ${topP}, seed ${seed} (+i for stream i), threads ${options.threads}, ` +
        `${parallel} sequences per context. Decode = tokens after the first / time after the first token; TTFT raw = evaluate() call ` +
        `to first token, server = request sent to first non-empty content chunk; aggregate = all tokens / wall time of the run.`);
    for (const warning of idleWarnings)
        notes.push(`- WARNING, machine not idle: ${warning}; the figures are unreliable.`);
    if (notes.length > 0) {
        console.log("");
        for (const note of notes)
            console.log(note);
    }
}

const idleWarnings: string[] = [];

async function settle(options: Options, what: string) {
    if (options.idleWait === 0)
        return;
    const others = await waitForIdleMachine(options.idleWait);
    if (!(others < 0.15))
        idleWarnings.push(`${what}: other processes still used ${fixed(others, 2)} cores after waiting ${options.idleWait} s`);
}

function log(message: string) {
    process.stderr.write(`[bench] ${message}\n`);
}

async function main() {
    const options = parseOptions();
    const cpus = os.cpus();
    console.log(`# Chat benchmark: raw node-llama-cpp vs server`);
    console.log("");
    console.log(`- command: \`npm run bench:chat${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}\``);
    console.log(`- machine: ${cpus.length} cores (${cpus[0]?.model.trim() ?? "unknown CPU"}), ${fixed(os.totalmem() / 2 ** 30, 1)} GiB RAM, ` +
        `${os.type()} ${os.release()} ${os.arch()}, load average ${os.loadavg().map((value) => value.toFixed(2)).join(" ")}`);
    console.log(`- node ${process.version}, node-llama-cpp ${nodeLlamaCppVersion()}`);

    const llama = await loadRawLlama();
    console.log(`- llama.cpp ${llama.llamaCppRelease.release}, backend ${llama.gpu === false ? "cpu" : llama.gpu} (${llama.buildType})`);
    const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), "chat-bench-"));
    const reports: ModelReport[] = [];
    const started = performance.now();
    try {
        for (const model of benchModels)
            reports.push(await benchModel(model, options, llama, tmpDir));
    } finally {
        fs.rmSync(tmpDir, {recursive: true, force: true});
    }
    for (const entry of reports)
        console.log(`- ${entry.model.name}: ${entry.model.note}, ${entry.model.path}`);
    report(reports, options);
    console.log("");
    console.log(`Bench took ${fixed((performance.now() - started) / 1000, 0)} s; load average at the end ` +
        `${os.loadavg().map((value) => value.toFixed(2)).join(" ")}.`);
}

function nodeLlamaCppVersion(): string {
    try {
        const file = path.join(projectRoot, "node_modules/node-llama-cpp/package.json");
        return String(JSON.parse(fs.readFileSync(file, "utf8")).version);
    } catch {
        return "unknown";
    }
}

try {
    await main();
    process.exit(0);
} catch (error) {
    console.error(`bench failed: ${(error as Error)?.stack ?? String(error)}`);
    process.exit(1);
}
