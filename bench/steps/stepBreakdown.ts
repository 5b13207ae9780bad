/**
 * `npm run bench:steps [-- --runs N] [--models 56mb,300mb] [--tokens N] [--skip-peer] [--also DIR]`
 *
 * Where the time of one decode step goes, with 1 stream and with 4 streams at once, for:
 * - raw: node-llama-cpp driven directly (`sequence.evaluate`, no server code), one context of 4
 *   sequences, as its documentation shows;
 * - ours: our chat engine (LlamaChatEngine, in process: no HTTP), the same context settings;
 * - ours over HTTP: our server in its own process, with the same client as llama-server;
 * - llama-server: its own per-token generation time (`timings.predicted_per_token_ms`: the wall
 *   time of its decode loop per step, as it reports it), over HTTP.
 * For raw and ours (in process) it splits a step (NativeCallTimer): node-llama-cpp's `decodeBatch`
 * (the async call running llama_decode on libuv's thread pool, from the call to its resolution),
 * then the samples (async calls on the pool as well, until the last resolves), then the JavaScript
 * until the next `decodeBatch` call (node-llama-cpp's generator, locks and queue; our loop), and
 * how many tokens each batch held (4 = the 4 streams decoded together, as llama-server does).
 * Then one ~2,000-token prompt per side (to its first token), with node-llama-cpp's decode calls
 * summed and llama-server's own `timings.prompt_ms`. Runs interleave; medians.
 * `--also DIR` adds the server of another checkout of this project (e.g. a git worktree of an older
 * commit, with node_modules linked) as one more side: before/after figures from one run.
 */
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { TokenBias, type Llama, type LlamaContext, type LlamaModel } from "node-llama-cpp";
import type { ChatJob } from "../../src/capabilities/chat/ChatEngine.js";
import { LlamaChatEngine } from "../../src/capabilities/chat/llama/LlamaChatEngine.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import { buildLlamaServer } from "../peer/buildLlamaServer.js";
import { bannedTokenIds, fillerText, greedyChatBody } from "../peer/greedyChatBody.js";
import { LlamaServerProcess } from "../peer/LlamaServerProcess.js";
import { cacheDir, peerContextSize, peerModelPath, projectRoot } from "../peer/peerModels.js";
import { streamChat } from "../peer/streamChat.js";
import { BenchServer } from "../serverClient.js";
import { fixed, median } from "../stats.js";
import { NativeCallTimer, type StepPhases } from "./NativeCallTimer.js";

const {values: args} = parseArgs({options: {
    runs: {type: "string", default: "7"},
    models: {type: "string", default: "56mb"},
    tokens: {type: "string", default: "128"},
    "skip-peer": {type: "boolean", default: false},
    also: {type: "string"}
}});
const runs = Number(args.runs);
const tokens = Number(args.tokens);
const prefillTokens = 2000;
const parallel = 4;
const threads = 1;

/** One run of `streams` streams: each stream's wall time per step after its first token, and the native calls. */
type RunFigures = {stepMs: number[], phases: StepPhases[], peerStepMs: number[]};
/** One prompt evaluated (and one token generated): time to first token, native decode time summed, llama-server's own prompt_ms. */
type PrefillFigures = {firstTokenMs: number, decodeMs: number, peerMs: number, promptTokens: number};
type Side = {
    name: string,
    run(streams: number, nonce: string): Promise<RunFigures>,
    prefill(prompt: string): Promise<PrefillFigures>,
    dispose(): Promise<void>
};

/** Per-step wall time of one stream from the arrival times of its tokens. */
function stepMs(arrivals: number[]) {
    if (arrivals.length !== tokens)
        throw new Error(`${arrivals.length} tokens instead of ${tokens}`);
    return (arrivals.at(-1)! - arrivals[0]) / (arrivals.length - 1);
}

async function rawSide(model: LlamaModel): Promise<Side> {
    const context: LlamaContext = await model.createContext({contextSize: peerContextSize, sequences: parallel, threads, flashAttention: "auto"});
    const timer = new NativeCallTimer(context);
    const sequences = Array.from({length: parallel}, () => context.getSequence());
    const bias = new TokenBias(model.tokenizer);
    for (const id of bannedTokenIds)
        bias.set(id as never, "never");
    return {
        name: "raw node-llama-cpp",
        async run(streams, nonce) {
            timer.reset();
            const perStream = await Promise.all(sequences.slice(0, streams).map(async (sequence, index) => {
                await sequence.clearHistory();
                const arrivals: number[] = [];
                for await (const _token of sequence.evaluate(model.tokenize(`${nonce}-${index} Tell me a story about a cat and a dog.`), {temperature: 0, tokenBias: bias})) {
                    arrivals.push(performance.now());
                    if (arrivals.length >= tokens)
                        break;
                }
                return stepMs(arrivals);
            }));
            return {stepMs: perStream, phases: timer.steps(streams), peerStepMs: []};
        },
        async prefill(prompt) {
            const [sequence] = sequences;
            await sequence.clearHistory();
            const promptTokens = model.tokenize(prompt);
            timer.reset();
            const start = performance.now();
            let firstTokenMs = NaN;
            for await (const _token of sequence.evaluate(promptTokens, {temperature: 0, tokenBias: bias})) {
                firstTokenMs = performance.now() - start;
                break;
            }
            return {firstTokenMs, decodeMs: timer.decodeTotalMs(), peerMs: NaN, promptTokens: promptTokens.length};
        },
        dispose: () => context.dispose()
    };
}

async function oursSide(llama: Llama, modelPath: string): Promise<Side> {
    const engine = await LlamaChatEngine.load(llama, {
        id: "bench", modelPath, contextSize: peerContextSize, threads, parallel, queueSize: parallel, promptCache: "off"
    });
    const timer = new NativeCallTimer((engine as unknown as {context: LlamaContext}).context);
    const logitBias = new Map(bannedTokenIds.map((id) => [id, -100]));
    const job = (content: string): ChatJob => ({
        turns: [{role: "user", content}], n: 1, maxTokens: tokens, stop: [], jsonObject: false, jsonSchema: null,
        sampling: {temperature: 0, topP: 1, seed: 1, frequencyPenalty: 0, presencePenalty: 0, logitBias}
    });
    return {
        name: "ours (engine)",
        async run(streams, nonce) {
            timer.reset();
            const perStream = await Promise.all(Array.from({length: streams}, async (_, index) => {
                const arrivals: number[] = [];
                const run = await engine.submit(job(`${nonce}-${index} Tell me a story about a cat and a dog.`), {
                    signal: new AbortController().signal,
                    onText: () => arrivals.push(performance.now())
                });
                await run.done;
                return stepMs(arrivals);
            }));
            return {stepMs: perStream, phases: timer.steps(streams), peerStepMs: []};
        },
        async prefill(prompt) {
            timer.reset();
            const start = performance.now();
            let firstTokenMs = NaN;
            await (await engine.submit({...job(prompt), maxTokens: 1}, {
                signal: new AbortController().signal,
                onText: () => firstTokenMs = performance.now() - start
            })).done;
            return {firstTokenMs, decodeMs: timer.decodeTotalMs(), peerMs: NaN, promptTokens: NaN};
        },
        dispose: () => engine.dispose()
    };
}

/** Streams over HTTP with the same client for both servers; llama-server also reports its own step time. */
function httpSide(name: string, baseUrl: string, stop: () => Promise<void>): Side {
    return {
        name,
        async run(streams, nonce) {
            const timings = await Promise.all(Array.from({length: streams}, (_, index) =>
                streamChat(baseUrl, greedyChatBody([{role: "user", content: `${nonce}-${index} Tell me a story about a cat and a dog.`}], tokens))));
            for (const timing of timings)
                if (timing.completionTokens !== tokens)
                    throw new Error(`${name}: ${timing.completionTokens} tokens instead of ${tokens}`);
            return {
                stepMs: timings.map((timing) => (timing.end - timing.firstToken) / (tokens - 1)),
                phases: [],
                peerStepMs: timings.map((timing) => timing.peerPerTokenMs ?? NaN)
            };
        },
        async prefill(prompt) {
            const timing = await streamChat(baseUrl, greedyChatBody([{role: "user", content: prompt}], 1));
            return {firstTokenMs: timing.firstToken - timing.start, decodeMs: NaN, peerMs: timing.peerPromptMs ?? NaN, promptTokens: timing.promptTokens};
        },
        dispose: stop
    };
}

async function peerSide(binary: string, modelPath: string): Promise<Side> {
    const server = await LlamaServerProcess.start(binary, [
        "-m", modelPath, "-t", String(threads), "-tb", String(threads), "-np", String(parallel), "-c", String(peerContextSize * parallel),
        "-b", "512", "-ub", "512", "-fa", "auto", "--jinja"
    ]);
    return httpSide("llama-server", server.baseUrl, () => server.stop());
}

/** Our server as a user starts it (its own process); every prompt starts with a nonce, so its prompt cache reuses at most the template's first tokens. */
async function oursOverHttpSide(modelPath: string, checkout = projectRoot, name = "ours (server, HTTP)"): Promise<Side> {
    const manifestPath = path.join(path.dirname(modelPath), "steps.models.json");
    fs.writeFileSync(manifestPath, JSON.stringify({models: [{id: "bench", task: "chat", path: modelPath, contextSize: peerContextSize}]}));
    const server = await BenchServer.start({
        cwd: checkout, manifestPath, keysFile: path.join(path.dirname(modelPath), "no-keys.json"), threads, parallel, startTimeoutMs: 300_000
    });
    return httpSide(name, server.baseUrl.replace(/\/v1$/, ""), () => server.stop());
}

async function benchModel(name: string, llama: Llama, llamaServer: string | null) {
    const modelPath = await peerModelPath(name);
    const model = await llama.loadModel({modelPath});
    const sides = [await rawSide(model), await oursSide(llama, modelPath), await oursOverHttpSide(modelPath)];
    if (args.also != null)
        sides.push(await oursOverHttpSide(modelPath, path.resolve(args.also), `server of ${path.basename(args.also)}`));
    if (llamaServer != null)
        sides.push(await peerSide(llamaServer, modelPath));
    try {
        for (const streams of [1, parallel]) {
            const figures = new Map(sides.map((side) => [side.name, [] as RunFigures[]]));
            for (let run = 0; run < runs; run++)
                for (const side of run % 2 === 0 ? sides : [...sides].reverse())
                    figures.get(side.name)!.push(await side.run(streams, `run${run}-${Date.now()}`));
            console.log(`\n## ${name}, ${streams} stream${streams > 1 ? "s" : ""} at once, ${tokens} tokens each, ${runs} interleaved runs (medians, ms per step)\n`);
            console.log("| | step, client's clock | native decodeBatch | then samples | then JavaScript to the next decode | tokens per batch | step, its own report |\n|---|---|---|---|---|---|---|");
            for (const side of sides) {
                const all = figures.get(side.name)!;
                const phase = (pick: (phases: StepPhases) => number) => fixed(median(all.map((run) => median(run.phases.map(pick)))), 3);
                const step = median(all.map((run) => median(run.stepMs)));
                const own = median(all.map((run) => median(run.peerStepMs)));
                console.log(`| ${side.name} | ${fixed(step, 3)} | ${phase((p) => p.decodeMs)} | ${phase((p) => p.sampleMs)} | ${phase((p) => p.javascriptMs)} | ` +
                    `${fixed(median(all.map((run) => run.phases.reduce((sum, p) => sum + p.tokens, 0) / run.phases.length)), 2)} | ${fixed(own, 3)} |`);
            }
        }

        // Prompt evaluation: a ~2,000-token prompt (the count measured with the model's tokenizer).
        const words = Math.round(400 * prefillTokens / model.tokenize(fillerText(400, 2)).length);
        const prefills = new Map(sides.map((side) => [side.name, [] as PrefillFigures[]]));
        for (let run = 0; run < runs; run++)
            for (const side of run % 2 === 0 ? sides : [...sides].reverse())
                prefills.get(side.name)!.push(await side.prefill(`run${run}-${Date.now()} ${fillerText(words, 2)}`));
        console.log(`\n## ${name}, prompt evaluation, ~${prefillTokens} tokens, ${runs} interleaved runs (medians, ms)\n`);
        console.log("| | prompt tokens | time to first token | native decodeBatch, summed | prompt evaluation, its own report |\n|---|---|---|---|---|");
        for (const side of sides) {
            const all = prefills.get(side.name)!;
            const med = (pick: (figures: PrefillFigures) => number) => median(all.map(pick));
            console.log(`| ${side.name} | ${fixed(med((f) => f.promptTokens), 0)} | ${fixed(med((f) => f.firstTokenMs), 1)} | ${fixed(med((f) => f.decodeMs), 1)} | ${fixed(med((f) => f.peerMs), 1)} |`);
        }
    } finally {
        for (const side of sides)
            await side.dispose();
        await model.dispose();
    }
}

const llama = await loadLlamaRuntime({build: (process.env.LLAMA_BUILD ?? "auto") as "auto", gpu: "off"});
const llamaServer = args["skip-peer"] ? null : buildLlamaServer(projectRoot, cacheDir);
for (const name of args.models!.split(","))
    await benchModel(name, llama, llamaServer);
