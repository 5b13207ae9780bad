/**
 * `npm run bench:peer [-- --runs N] [--models 56mb,300mb] [--tokens N] [--skip-peer]`
 *
 * This server versus llama.cpp's own llama-server, built from the very llama.cpp source that
 * node-llama-cpp ships (bench/peer/buildLlamaServer.ts; once, into .cache/, offline). Same GGUF
 * (random-weight llama models written by our GGUF writer), threads 1, 4 parallel sequences, same
 * client (bench/peer/streamChat.ts), greedy, end-of-generation and byte-fallback tokens banned
 * through logit_bias so every run generates the same number of tokens and llama-server never
 * meets invalid UTF-8 (it answers 500 then). Both servers are up at once; their runs interleave
 * (the order alternates) and the table shows medians and ratios. Every prompt starts with a
 * nonce, so nothing is reused across runs except where reuse is the point (the follow-up turn).
 */
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { buildLlamaServer } from "./peer/buildLlamaServer.js";
import { fillerText, greedyChatBody as body } from "./peer/greedyChatBody.js";
import { LlamaServerProcess } from "./peer/LlamaServerProcess.js";
import { cacheDir, peerContextSize as contextSize, peerModelPath, peerModels, projectRoot } from "./peer/peerModels.js";
import { streamChat, type ChatTiming } from "./peer/streamChat.js";
import { BenchServer } from "./serverClient.js";
import { fixed, median } from "./stats.js";

const parallel = 4;
const threads = 1;

type Side = {name: string, url: string};

const {values: args} = parseArgs({options: {
    runs: {type: "string", default: "5"},
    models: {type: "string", default: "56mb,300mb"},
    tokens: {type: "string", default: "128"},
    "skip-peer": {type: "boolean", default: false}
}});
const runs = Number(args.runs);
const decodeTokens = Number(args.tokens);

const text = fillerText;

function expectTokens(timing: ChatTiming, tokens: number, what: string) {
    if (timing.completionTokens !== tokens)
        throw new Error(`${what}: ${timing.completionTokens} tokens instead of ${tokens}`);
}

/** Words of filler that make a prompt of about `tokens` tokens (measured on the first side). */
async function calibrate(side: Side, tokens: number): Promise<number> {
    const probe = await streamChat(side.url, body([{role: "user", content: text(400, 0)}], 1));
    return Math.max(1, Math.round(400 * tokens / probe.promptTokens));
}

async function measure(side: Side, nonce: string, longWords: number, prefillWords: number, record: (label: string, value: number) => void) {
    // 1 stream: decode speed and time to first token of a short prompt.
    const single = await streamChat(side.url, body([{role: "user", content: `${nonce} Tell me a story about a cat and a dog.`}], decodeTokens));
    expectTokens(single, decodeTokens, "1 stream");
    record("decode", (decodeTokens - 1) / ((single.end - single.firstToken) / 1000));
    record("ttftShort", single.firstToken - single.start);

    // 4 streams at once.
    const start = performance.now();
    const four = await Promise.all(Array.from({length: parallel}, (_, index) =>
        streamChat(side.url, body([{role: "user", content: `${nonce}-${index} Tell me a story about a cat and a dog.`}], decodeTokens), start)));
    four.forEach((timing) => expectTokens(timing, decodeTokens, "4 streams"));
    record("aggregate", parallel * decodeTokens / ((Math.max(...four.map((timing) => timing.end)) - start) / 1000));

    // A ~720-token prompt, then 3 more turns on the same conversation: the 4th turn's TTFT.
    const history: {role: string, content: string}[] = [{role: "system", content: `${nonce} ${text(longWords, 1)}`}, {role: "user", content: "Tell me a story."}];
    const long = await streamChat(side.url, body(history, 16));
    record("ttftLong", long.firstToken - long.start);
    let reply = long.text;
    for (let turn = 2; turn <= 4; turn++) {
        history.push({role: "assistant", content: reply}, {role: "user", content: `And then, part ${turn}?`});
        const next = await streamChat(side.url, body(history, 16));
        reply = next.text;
        if (turn === 4) {
            record("ttftFollowUp", next.firstToken - next.start);
            record("promptTokensFollowUp", next.promptTokens);
        }
    }

    // Prompt evaluation speed on a ~2000-token prompt.
    const prefill = await streamChat(side.url, body([{role: "user", content: `${nonce} ${text(prefillWords, 2)}`}], 1));
    record("prefill", prefill.promptTokens / ((prefill.firstToken - prefill.start) / 1000));
    record("promptTokensPrefill", prefill.promptTokens);
}

async function benchModel(name: string, llamaServer: string | null) {
    const options = peerModels[name];
    const modelPath = await peerModelPath(name);
    const modelDir = path.dirname(modelPath);
    const sizeMb = fs.statSync(modelPath).size / 1e6;
    const manifestPath = path.join(modelDir, `${name}.models.json`);
    fs.writeFileSync(manifestPath, JSON.stringify({models: [{id: "bench", task: "chat", path: modelPath, contextSize}]}));

    const ours = await BenchServer.start({
        cwd: projectRoot, manifestPath, keysFile: path.join(modelDir, "no-keys.json"), threads, parallel, startTimeoutMs: 300_000
    });
    const health: any = await (await fetch(`${ours.baseUrl}/health`)).json();
    const details = health.models?.bench?.details ?? {};
    const peer = llamaServer == null ? null : await LlamaServerProcess.start(llamaServer, [
        "-m", modelPath, "-t", String(threads), "-tb", String(threads), "-np", String(parallel), "-c", String(contextSize * parallel),
        "-b", "512", "-ub", "512", "-fa", "auto", "--jinja"
    ]);
    const sides: Side[] = [{name: "ours", url: ours.baseUrl.replace(/\/v1$/, "")}];
    if (peer != null)
        sides.push({name: "llama-server", url: peer.baseUrl});
    try {
        const longWords = await calibrate(sides[0], 720);
        const prefillWords = await calibrate(sides[0], 2000);
        const results = new Map<string, Map<string, number[]>>();
        for (let run = 0; run < runs; run++) {
            const order = run % 2 === 0 ? sides : [...sides].reverse();
            for (const side of order) {
                const perSide = results.get(side.name) ?? new Map<string, number[]>();
                results.set(side.name, perSide);
                try {
                    await measure(side, `run${run}-${side.name}-${Date.now()}`, longWords, prefillWords, (label, value) => {
                        perSide.set(label, [...perSide.get(label) ?? [], value]);
                    });
                } catch (error) {
                    const log = side.name === "ours" ? ours.log : peer?.log ?? "";
                    throw new Error(`${name}, run ${run}, ${side.name} failed: ${(error as Error).message}; ${(error as Error).cause ?? ""}\n${log.slice(-3000)}`);
                }
            }
        }
        const rows: [string, string, boolean][] = [
            ["decode", "decode tok/s, 1 stream", true],
            ["ttftShort", "time to first token, short prompt (ms)", false],
            ["aggregate", "aggregate tok/s, 4 streams", true],
            ["ttftLong", "time to first token, ~720-token prompt (ms)", false],
            ["ttftFollowUp", "time to first token, follow-up turn 4 deep (ms)", false],
            ["prefill", "prompt eval tok/s, ~2000-token prompt", true]
        ];
        const med = (sideName: string, label: string) => median(results.get(sideName)?.get(label) ?? []);
        console.log(`\n## ${name}: ${sizeMb.toFixed(0)} MB F16 (${options.nLayers} layers, ${options.nEmbd} wide), ` +
            `threads ${threads}, parallel ${parallel}, ${runs} interleaved runs, medians`);
        console.log(`ours: ${details.binary ?? "?"}, flash attention ${details.flashAttention}, prompt cache ${details.promptCache?.mode}; ` +
            `follow-up prompt ${fixed(med("ours", "promptTokensFollowUp"), 0)} tokens, prefill prompt ${fixed(med("ours", "promptTokensPrefill"), 0)} tokens`);
        if (peer != null)
            console.log(`llama-server: ${peer.commandLine}`);
        console.log("\n| measure | ours | llama-server | ours / llama-server |\n|---|---|---|---|");
        for (const [label, title, higherIsBetter] of rows) {
            const a = med("ours", label);
            const b = med("llama-server", label);
            const ratio = higherIsBetter ? a / b : b / a;
            const digits = label.startsWith("ttft") ? 1 : 0;
            console.log(`| ${title} | ${fixed(a, digits)} | ${fixed(b, digits)} | ${higherIsBetter ? fixed(ratio, 2) : `${fixed(a / b, 2)}x the time`} |`);
        }
    } finally {
        await ours.stop();
        await peer?.stop();
    }
}

const llamaServer = args["skip-peer"] ? null : buildLlamaServer(projectRoot, cacheDir);
console.log("Note: on a shared machine the absolute figures move with the load; the runs interleave so the ratios hold better.");
for (const name of args.models!.split(","))
    await benchModel(name, llamaServer);
