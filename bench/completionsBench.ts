/**
 * `npm run bench:completions [-- --runs N]`
 *
 * /v1/completions against /v1/chat/completions on the same server and model (a model without a
 * chat template, so both prompts are the same tokens), and the cost of scoring a prompt
 * (`echo` + `logprobs` + `max_tokens: 0`: an evaluation with a raw distribution read per prompt
 * token) against evaluating it once for one token (both prompts new to the prompt cache). Non-streamed requests, alternated, medians of
 * the wall time per request. The server runs as a child process with 1 thread.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { bench50mbOptions, makeTestLlamaGguf } from "../test/support/gguf/makeTestLlamaGguf.js";
import { BenchServer } from "./serverClient.js";
import { fixed, median } from "./stats.js";

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const {values} = parseArgs({options: {runs: {type: "string", default: "7"}}});
const runs = Number(values.runs);

type BenchModel = {name: string, path: string, eos: number, story: string};

async function main() {
    const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-completions-"));
    const plain50mb = path.join(tmpDir, "bench50mb-plain.gguf");
    await makeTestLlamaGguf(plain50mb, {...bench50mbOptions, chatTemplate: null});
    const models: BenchModel[] = [
        {name: "stories260K", path: "models/demo/stories260K.gguf", eos: 2, story: "Once upon a time, there was a little girl named Lily. She"},
        {name: "bench50mb (no template)", path: plain50mb, eos: 4, story: "Tell me a story about a cat and a dog."}
    ];
    const manifestPath = path.join(tmpDir, "models.json");
    fs.writeFileSync(manifestPath, JSON.stringify({models: models.map((model, index) => ({id: `m${index}`, task: "chat", path: model.path, contextSize: 1024}))}));
    const server = await BenchServer.start({
        cwd: projectRoot, manifestPath, keysFile: path.join(tmpDir, "no-api-keys.json"), threads: 1, parallel: 2, startTimeoutMs: 60_000
    });
    const post = async (pathName: string, body: unknown) => {
        const start = performance.now();
        const response = await fetch(`${server.baseUrl}${pathName}`, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
        const json = await response.json() as {usage: {prompt_tokens: number, completion_tokens: number}};
        if (response.status !== 200)
            throw new Error(`${pathName}: ${response.status} ${JSON.stringify(json)}`);
        return {ms: performance.now() - start, usage: json.usage};
    };

    try {
        console.log(`bench:completions, ${runs} alternated runs each, medians of wall time per request (server: 1 thread, ${server.commandLine})`);
        for (const [index, model] of models.entries()) {
            const id = `m${index}`;
            const sampling = {temperature: 0.8, seed: 42, max_tokens: 200, logit_bias: {[String(model.eos)]: -100}};
            // ~250 prompt tokens for scoring.
            const longPrompt = Array.from({length: 12}, () => model.story).join(" ");
            const chat: number[] = [], completions: number[] = [], scored: number[] = [], once: number[] = [];
            let promptTokens = 0;
            for (let run = 0; run < runs + 1; run++) {
                const results = [
                    // Equal-length prompts that differ from the first token, so neither side reuses the other's prompt cache.
                    await post("/v1/chat/completions", {model: id, messages: [{role: "user", content: `${run + 100} ${model.story}`}], ...sampling}),
                    await post("/v1/completions", {model: id, prompt: `${run + 200} ${model.story}`, ...sampling}),
                    // A different first word each run: no prompt-cache hit on either side.
                    await post("/v1/completions", {model: id, prompt: `${run} ${longPrompt}`, max_tokens: 0, echo: true, logprobs: 5}),
                    await post("/v1/completions", {model: id, prompt: `${run + 1000} ${longPrompt}`, max_tokens: 1, temperature: 0})
                ];
                promptTokens = results[3].usage.prompt_tokens;
                if (run === 0)
                    continue; // warm-up
                [chat, completions, scored, once].forEach((list, at) => list.push(results[at].ms));
            }
            console.log(`\n${model.name}`);
            console.log(`  200 tokens, same prompt length:   chat ${fixed(median(chat))} ms   completions ${fixed(median(completions))} ms   ratio ${fixed(median(completions) / median(chat), 2)}`);
            console.log(`  ${promptTokens}-token prompt: evaluate + 1 token ${fixed(median(once))} ms   echo+logprobs 5, max_tokens 0 ${fixed(median(scored))} ms   ratio ${fixed(median(scored) / median(once), 2)}`);
        }
    } finally {
        await server.stop();
        fs.rmSync(tmpDir, {recursive: true, force: true});
    }
}

await main();
