/**
 * `npm run bench:responses`: a follow-up turn through the Responses API's `previous_response_id`
 * against the same follow-up through chat completions (the whole conversation resent), on a ~700-token
 * conversation, interleaved, on stories260K (real weights; context 2048, greedy). Prints each side's
 * median wall time and `cached_tokens`, and the ratio. Figures: docs/performance.md ("Responses API").
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import { BenchServer } from "./serverClient.js";
import { fixed, median } from "./stats.js";

const rounds = Number(process.env.ROUNDS ?? 9);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "los-bench-responses-"));
const manifestPath = path.join(tmp, "models.json");
fs.writeFileSync(manifestPath, JSON.stringify({models: [{id: "stories", task: "chat", path: path.join(root, "models/demo/stories260K.gguf"), contextSize: 2048}]}));
const server = await BenchServer.start({cwd: root, manifestPath, keysFile: path.join(tmp, "no-keys.json"), threads: 1, parallel: 2, startTimeoutMs: 60_000});
const client = new OpenAI({baseURL: `${server.baseUrl}/v1`, apiKey: "none", maxRetries: 0});

// ~700 tokens of conversation: a long opening user turn, the model's answer, then the follow-up question.
const opening = "Once upon a time there was a little girl named Lily. She loved to play outside in the park with her friends. ".repeat(24);
const followUp = "What happened next?";
const timed = async <T>(run: () => Promise<T>) => {
    const started = performance.now();
    const result = await run();
    return {ms: performance.now() - started, result};
};

try {
    const viaResponses: number[] = [];
    const viaChat: number[] = [];
    let cachedResponses = 0;
    let cachedChat = 0;
    let promptTokens = 0;
    for (let round = 0; round < rounds; round++) {
        // Responses: the first turn is stored; the follow-up names it.
        const first = await client.responses.create({model: "stories", input: opening, max_output_tokens: 40, temperature: 0});
        const responses = await timed(() => client.responses.create({model: "stories", previous_response_id: first.id, input: followUp, max_output_tokens: 20, temperature: 0}));
        viaResponses.push(responses.ms);
        cachedResponses = responses.result.usage!.input_tokens_details.cached_tokens;
        promptTokens = responses.result.usage!.input_tokens;
        // Chat completions: the same conversation resent whole.
        const chatFirst = await client.chat.completions.create({model: "stories", messages: [{role: "user", content: opening}], max_tokens: 40, temperature: 0});
        const chat = await timed(() => client.chat.completions.create({model: "stories", max_tokens: 20, temperature: 0, messages: [
            {role: "user", content: opening}, {role: "assistant", content: chatFirst.choices[0].message.content}, {role: "user", content: followUp}
        ]}));
        viaChat.push(chat.ms);
        cachedChat = chat.result.usage!.prompt_tokens_details?.cached_tokens ?? 0;
    }
    console.log(`follow-up on a ${promptTokens}-token conversation, median of ${rounds} (interleaved):`);
    console.log(`  responses (previous_response_id): ${fixed(median(viaResponses), 1)} ms, cached_tokens ${cachedResponses}`);
    console.log(`  chat completions (resent):        ${fixed(median(viaChat), 1)} ms, cached_tokens ${cachedChat}`);
    console.log(`  ratio responses / chat: ${fixed(median(viaResponses) / median(viaChat), 2)}`);
} finally {
    await server.stop();
    fs.rmSync(tmp, {recursive: true, force: true});
}
