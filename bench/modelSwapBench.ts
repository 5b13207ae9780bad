/**
 * `npm run bench:model-swap [-- --turns N] [--skip-peer]`
 *
 * Swapping chat models within a memory budget, and the prompt cache across an unload (docs/models.md
 * "The prompt cache across an unload"). Three generated chat models of ~56 MB each (bench:peer's 56 MB
 * shape, three seeds) and room for two: this server with `--memory-budget` = 2.5 model estimates (LRU
 * eviction), once with the saved prompt cache (default) and once without (`--prompt-cache-disk 0`), and
 * llama-server in router mode (`--models-dir`, `--models-max 2`), built as bench:peer builds it. All three
 * are up at once and every step runs on each in turn (the order alternating), so drift of a shared machine
 * hits them alike. Threads 1, 2 sequences per model, 4,096 tokens each, greedy, fixed-length answers.
 *
 * Phases, in order:
 * 1. round-robin over two models (no swaps) and 2. over all three (every request evicts one): fresh short
 *    prompts, time to first token p50/p95 and the seconds each load took;
 * 3. conversations on two models (warm: no evictions) and 4. on three (each follow-up turn comes after its
 *    model was evicted): a ~1,000-token system prompt and short turns; the follow-up turns' TTFT,
 *    with the model's reload and without it (TTFT less the load: our /metrics `los_model_load_seconds`;
 *    llama-server's model is loaded by `POST /models/load` first and the load timed), and `cached_tokens`.
 */
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { makeTestLlamaGguf } from "../test/support/gguf/makeTestLlamaGguf.js";
import { buildLlamaServer } from "./peer/buildLlamaServer.js";
import { fillerText, greedyChatBody } from "./peer/greedyChatBody.js";
import { LlamaServerProcess } from "./peer/LlamaServerProcess.js";
import { cacheDir, peerContextSize as contextSize, peerModels, projectRoot } from "./peer/peerModels.js";
import { streamChat, type ChatTiming } from "./peer/streamChat.js";
import { BenchServer } from "./serverClient.js";
import { fixed, median, percentile } from "./stats.js";

const threads = 1;
const parallel = 2;
const answerTokens = 8;
const modelIds = ["swap-1", "swap-2", "swap-3"];

const {values: args} = parseArgs({options: {
    turns: {type: "string", default: "5"},
    "round-robin": {type: "string", default: "20"},
    "skip-peer": {type: "boolean", default: false}
}});
const turns = Number(args.turns);
const roundRobin = Number(args["round-robin"]);

type Message = {role: string, content: string};
/** One server under test: how to ask it, and how long its last load of `model` took (null: not measured that way). */
type Side = {
    name: string;
    url: string;
    /** Makes sure `model` is loaded before a request (llama-server: POST /models/load): the seconds it took, null when it was loaded. */
    preload?: (model: string) => Promise<number | null>;
    /** Seconds the last load of `model` took, if it loaded since `loadsBefore`. */
    lastLoad?: (model: string) => Promise<{loads: number, seconds: number}>;
    stop: () => Promise<void>;
};

const sample = () => new Map<string, number[]>();
const results = new Map<string, Map<string, number[]>>();
const record = (side: string, label: string, value: number) => {
    const perSide = results.get(side) ?? sample();
    results.set(side, perSide);
    perSide.set(label, [...perSide.get(label) ?? [], value]);
};

async function swapModels(): Promise<string> {
    const folder = path.join(cacheDir, "swap-models");
    fs.mkdirSync(folder, {recursive: true});
    for (const [index, id] of modelIds.entries()) {
        const file = path.join(folder, `${id}.gguf`);
        if (!fs.existsSync(file))
            await makeTestLlamaGguf(file, {...peerModels["56mb"], seed: 31 + index, name: id});
    }
    return folder;
}

/** This server's Prometheus figure `name{model="id",...}`, 0 when absent. */
function metric(text: string, name: string, model: string, extra = ""): number {
    const line = text.split("\n").find((row) => row.startsWith(`${name}{`) && row.includes(`model="${model}"`) && row.includes(extra));
    return line == null ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
}

async function startOurs(name: string, folder: string, budget: number | null, extraArgs: string[]): Promise<Side> {
    const manifestPath = path.join(folder, "swap.models.json");
    fs.writeFileSync(manifestPath, JSON.stringify({models: modelIds.map((id) => ({id, task: "chat", path: path.join(folder, `${id}.gguf`), contextSize}))}));
    const server = await BenchServer.start({
        cwd: projectRoot, manifestPath, keysFile: path.join(folder, "no-keys.json"), threads, parallel, startTimeoutMs: 300_000,
        extraArgs: [...budget == null ? [] : ["--memory-budget", String(budget)], "--keep-alive", "forever",
            "--cache-dir", path.join(cacheDir, `swap-run-${name}`), ...extraArgs]
    });
    const url = server.baseUrl.replace(/\/v1$/, "");
    return {
        name, url,
        lastLoad: async (model) => {
            const text = await (await fetch(`${url}/metrics`)).text();
            return {loads: metric(text, "los_model_loads_total", model, 'result="ok"'), seconds: metric(text, "los_model_load_seconds", model)};
        },
        stop: () => server.stop()
    };
}

async function startPeer(binary: string, folder: string): Promise<Side> {
    const peer = await LlamaServerProcess.start(binary, [
        "--models-dir", folder, "--models-max", "2", "-t", String(threads), "-tb", String(threads), "-np", String(parallel),
        "-c", String(contextSize * parallel), "-b", "512", "-ub", "512", "-fa", "auto", "--jinja"
    ]);
    return {
        name: "llama-server", url: peer.baseUrl,
        preload: async (model) => {
            const status = async () => {
                const list = await (await fetch(`${peer.baseUrl}/models`)).json() as {data: {id: string, status?: {value?: string, failed?: boolean}}[]};
                const found = list.data.find((entry) => entry.id === model)?.status;
                if (found?.failed === true)
                    throw new Error(`llama-server failed to load ${model}:\n${peer.log.slice(-3000)}`);
                return found?.value;
            };
            if (await status() === "loaded")
                return null;
            const start = performance.now();
            const response = await fetch(`${peer.baseUrl}/models/load`, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({model})});
            await response.body?.cancel();
            while (await status() !== "loaded")
                await new Promise((resolve) => setTimeout(resolve, 10));
            return (performance.now() - start) / 1000;
        },
        stop: () => peer.stop()
    };
}

/** One request on every side, the order alternating by `step`; `measure` records what the step is about. */
async function onEachSide(sides: Side[], step: number, model: string, messages: (side: Side) => Message[],
    measure: (side: Side, timing: ChatTiming, loadSeconds: number | null) => void) {
    for (const side of step % 2 === 0 ? sides : [...sides].reverse()) {
        const preloaded = side.preload == null ? null : await side.preload(model);
        const before = await side.lastLoad?.(model);
        let timing: ChatTiming;
        try {
            timing = await streamChat(side.url, {...greedyChatBody(messages(side), answerTokens), model});
        } catch (error) {
            throw new Error(`${side.name}, ${model}: ${(error as Error).message}`);
        }
        if (timing.completionTokens !== answerTokens)
            throw new Error(`${side.name}: ${timing.completionTokens} tokens instead of ${answerTokens}`);
        const after = await side.lastLoad?.(model);
        const loaded = before != null && after != null && after.loads > before.loads ? after.seconds : null;
        measure(side, timing, preloaded ?? loaded);
    }
}

const ttft = (timing: ChatTiming) => timing.firstToken - timing.start;

async function requests(sides: Side[], models: string[], label: string) {
    for (let step = 0; step < roundRobin; step++) {
        const model = models[step % models.length];
        await onEachSide(sides, step, model, (side) => [{role: "user", content: `${label}-${step}-${side.name}-${Date.now()} Tell me a story about a cat.`}],
            (side, timing, load) => {
                record(side.name, `${label}:ttft`, ttft(timing) + (side.preload != null && load != null ? load * 1000 : 0));
                if (load != null)
                    record(side.name, `${label}:load`, load);
            });
    }
}

async function conversations(sides: Side[], models: string[], label: string, systemWords: number) {
    const histories = new Map<string, Message[]>();
    for (let turn = 1; turn <= turns; turn++)
        for (const [index, model] of models.entries()) {
            await onEachSide(sides, turn * models.length + index, model, (side) => {
                const key = `${side.name}/${model}`;
                const history = histories.get(key) ?? [
                    {role: "system", content: `${label}-${model}-${side.name}-${Date.now()} ${fillerText(systemWords, index)}`},
                    {role: "user", content: "Tell me a story."}
                ];
                histories.set(key, history);
                return history;
            }, (side, timing, load) => {
                const history = histories.get(`${side.name}/${model}`)!;
                history.push({role: "assistant", content: timing.text}, {role: "user", content: `And then, part ${turn + 1}?`});
                if (turn === 1)
                    return;
                const withLoad = ttft(timing) + (side.preload != null && load != null ? load * 1000 : 0);
                record(side.name, `${label}:ttft`, withLoad);
                record(side.name, `${label}:ttftAfterLoad`, withLoad - (load ?? 0) * 1000);
                record(side.name, `${label}:cached`, timing.cachedTokens ?? Number.NaN);
                record(side.name, `${label}:prompt`, timing.promptTokens);
                if (load != null)
                    record(side.name, `${label}:load`, load);
            });
        }
}

const folder = await swapModels();
const binary = args["skip-peer"] ? null : buildLlamaServer(projectRoot, cacheDir);
console.log("Note: on a shared machine the absolute figures move with the load; the sides interleave step by step so the ratios hold better.");

// The budget: 2.5 times one model's estimate (the three are the same shape), read off a first load.
const probe = await startOurs("probe", folder, null, []);
await streamChat(probe.url, {...greedyChatBody([{role: "user", content: "hi"}], 1), model: modelIds[0]});
const estimate = (await (await fetch(`${probe.url}/v1/models/${modelIds[0]}`)).json() as {status: {estimated_bytes: number}}).status.estimated_bytes;
await probe.stop();
const budget = Math.round(estimate * 2.5);

const sides: Side[] = [
    await startOurs("ours", folder, budget, []),
    await startOurs("ours, no saved state", folder, budget, ["--prompt-cache-disk", "0"])
];
if (binary != null)
    sides.push(await startPeer(binary, folder));
try {
    // Not measured: each side's first loads (the runtime itself loads with the first model).
    for (const [step, model] of modelIds.entries())
        await onEachSide(sides, step, model, () => [{role: "user", content: `warm-up ${Date.now()}`}], () => {});
    // ~1,000 tokens of system prompt (bench:peer's filler is about 2.4 tokens a word on these models).
    const systemWords = 420;
    await requests(sides, modelIds.slice(0, 2), "two");
    await requests(sides, modelIds, "three");
    await conversations(sides, modelIds.slice(0, 2), "warm", systemWords);
    await conversations(sides, modelIds, "swapped", systemWords);
} finally {
    await Promise.all(sides.map((side) => side.stop()));
    for (const side of ["ours", "ours, no saved state", "probe"])
        fs.rmSync(path.join(cacheDir, `swap-run-${side}`), {recursive: true, force: true});
}

const of = (side: string, label: string) => results.get(side)?.get(label) ?? [];
const ms = (values: number[], p: number | "median") => fixed(p === "median" ? median(values) : percentile(values, p), 0);
console.log(`\n## Three ~56 MB chat models, room for two (budget ${fixed(budget / 2 ** 20, 0)} MiB = 2.5 x the estimate of ${fixed(estimate / 2 ** 20, 0)} MiB; llama-server --models-max 2)`);
console.log(`threads ${threads}, ${parallel} sequences of ${contextSize} tokens per model, ${answerTokens}-token answers, ${roundRobin} round-robin requests, ${turns} turns per conversation; times in ms, loads in s\n`);
const names = sides.map((side) => side.name);
console.log(`| measure | ${names.join(" | ")} |\n|---|${names.map(() => "---").join("|")}|`);
const row = (title: string, cell: (side: string) => string) => console.log(`| ${title} | ${names.map(cell).join(" | ")} |`);
row("TTFT p50 / p95, round-robin over 2 models (no swaps)", (side) => `${ms(of(side, "two:ttft"), "median")} / ${ms(of(side, "two:ttft"), 0.95)}`);
row("TTFT p50 / p95, round-robin over 3 models (a swap each)", (side) => `${ms(of(side, "three:ttft"), "median")} / ${ms(of(side, "three:ttft"), 0.95)}`);
row("load seconds, median (round-robin over 3)", (side) => fixed(median(of(side, "three:load")), 3));
row("follow-up TTFT, warm (2 models, no evictions), p50", (side) => ms(of(side, "warm:ttft"), "median"));
row("follow-up TTFT after an eviction, reload included, p50 / p95", (side) => `${ms(of(side, "swapped:ttft"), "median")} / ${ms(of(side, "swapped:ttft"), 0.95)}`);
row("follow-up TTFT after an eviction, once the model is back (TTFT less the load), p50", (side) => ms(of(side, "swapped:ttftAfterLoad"), "median"));
row("load seconds of those reloads, median", (side) => fixed(median(of(side, "swapped:load")), 3));
row("cached / prompt tokens of those follow-ups, median", (side) => `${fixed(median(of(side, "swapped:cached")), 0)} / ${fixed(median(of(side, "swapped:prompt")), 0)}`);
row("after an eviction / warm, reload included", (side) => `${fixed(median(of(side, "swapped:ttft")) / median(of(side, "warm:ttft")), 2)}x`);
row("after an eviction / warm, once the model is back", (side) => `${fixed(median(of(side, "swapped:ttftAfterLoad")) / median(of(side, "warm:ttft")), 2)}x`);
