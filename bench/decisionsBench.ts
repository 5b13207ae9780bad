/**
 * `npm run bench:decisions [-- --threads N --parallel N --counts 1,20,400]`
 *
 * /v1/decisions against what a client without it does: the same questions as separate /v1/chat/completions calls
 * (max_tokens 1, logprobs with top_logprobs 5: the label read from the first token's logprobs), sent `parallel` at a
 * time. 1, 20 and 400 choice questions (3 options each) about one ~2,000-token input on the ~50 MB generated chat
 * model (bench50mbOptions, ChatML template), the server as a child process. Each count gets a fresh input (a different
 * first word), so the first request evaluates its prefix; the decisions request is then repeated (the prefix from the
 * prompt cache). Reports wall times and the usage's cached tokens.
 */
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { bench50mbOptions, makeTestLlamaGguf } from "../test/support/gguf/makeTestLlamaGguf.js";
import { BenchServer } from "./serverClient.js";
import { fixed } from "./stats.js";

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const {values} = parseArgs({options: {threads: {type: "string", default: "1"}, parallel: {type: "string", default: "4"}, counts: {type: "string", default: "1,20,400"}}});
const parallel = Number(values.parallel);

const sentence = "The customer wrote that the parcel arrived late, the box was damaged, and one of the two items was missing from the order. ";

async function main() {
    const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-decisions-"));
    const modelPath = path.join(tmpDir, "bench50mb.gguf");
    await makeTestLlamaGguf(modelPath, bench50mbOptions);
    const manifestPath = path.join(tmpDir, "models.json");
    fs.writeFileSync(manifestPath, JSON.stringify({models: [{id: "m", task: "chat", path: modelPath, contextSize: 4096}]}));
    const server = await BenchServer.start({
        cwd: projectRoot, manifestPath, keysFile: path.join(tmpDir, "no-api-keys.json"), threads: Number(values.threads), parallel, startTimeoutMs: 60_000
    });
    // node:http rather than fetch: a 400-question request on one CPU thread outlasts fetch's 300 s header timeout.
    const post = <T>(pathName: string, body: unknown) => new Promise<T>((resolve, reject) => {
        const request = http.request(`${server.baseUrl}${pathName}`, {method: "POST", headers: {"Content-Type": "application/json"}}, (response) => {
            const chunks: Buffer[] = [];
            response.on("data", (chunk: Buffer) => chunks.push(chunk));
            response.on("end", () => {
                const text = Buffer.concat(chunks).toString();
                if (response.statusCode !== 200)
                    reject(new Error(`${pathName}: ${response.statusCode} ${text}`));
                else
                    resolve(JSON.parse(text) as T);
            });
        });
        request.on("error", reject);
        request.end(JSON.stringify(body));
    });
    const timed = async <T>(work: () => Promise<T>) => {
        const start = performance.now();
        const result = await work();
        return {ms: performance.now() - start, result};
    };

    try {
        console.log(`bench:decisions: ${fs.statSync(modelPath).size / 2 ** 20 | 0} MB model, server ${server.commandLine}`);
        // The model loads on its first request: not in any figure.
        await post("/v1/chat/completions", {model: "m", messages: [{role: "user", content: "hi"}], max_tokens: 1});
        for (const [round, count] of values.counts.split(",").map(Number).entries()) {
            const input = `${round + 1}. ` + sentence.repeat(34);
            const choices = [{value: "shipping"}, {value: "billing"}, {value: "product"}];
            const questions = Array.from({length: count}, (_, index) => ({type: "choice", instructions: `Question ${index + 1}: which team should handle this?`, choices}));
            type Usage = {input_tokens: number, input_tokens_details: {cached_tokens: number}};
            const cold = await timed(() => post<{usage: Usage}>("/v1/decisions", {model: "m", input, questions}));
            const warm = await timed(() => post<{usage: Usage}>("/v1/decisions", {model: "m", input, questions}));
            // The client without /v1/decisions: one chat call per question, `parallel` in flight, its own fresh input.
            const separateInput = `${round + 101}. ` + sentence.repeat(34);
            const separate = await timed(async () => {
                let next = 0;
                let promptTokens = 0;
                await Promise.all(Array.from({length: Math.min(parallel, count)}, async () => {
                    while (next < count) {
                        const question = questions[next++];
                        const text = `${question.instructions}\n\nOptions:\nA. shipping\nB. billing\nC. product\n\nAnswer with the label of one option (A, B, C) and nothing else.`;
                        const completion = await post<{usage: {prompt_tokens: number}}>("/v1/chat/completions", {
                            model: "m", messages: [{role: "user", content: separateInput}, {role: "user", content: text}], max_tokens: 1, logprobs: true, top_logprobs: 5, temperature: 0
                        });
                        promptTokens += completion.usage.prompt_tokens;
                    }
                }));
                return promptTokens;
            });
            console.log(`\n${count} question(s), ${cold.result.usage.input_tokens} input tokens in all (the input once, each question in two orders)`);
            console.log(`  /v1/decisions, new input:     ${fixed(cold.ms)} ms (cached_tokens ${cold.result.usage.input_tokens_details.cached_tokens})`);
            console.log(`  /v1/decisions, same again:    ${fixed(warm.ms)} ms (cached_tokens ${warm.result.usage.input_tokens_details.cached_tokens})`);
            console.log(`  separate chat calls (${parallel} at a time): ${fixed(separate.ms)} ms (${separate.result} prompt tokens)`);
            console.log(`  decisions / separate: ${fixed(cold.ms / separate.ms, 3)} (new input), ${fixed(warm.ms / separate.ms, 3)} (cached)`);
        }
    } finally {
        await server.stop();
        fs.rmSync(tmpDir, {recursive: true, force: true});
    }
}

await main();
