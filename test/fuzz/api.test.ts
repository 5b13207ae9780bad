import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
import { tinyBertPath, tinyChatModelPath, tinyToolsModelPath } from "../support/testModels.js";
import { chatCapability } from "../../src/capabilities/chat/chatCapability.js";
import { defaultConfig } from "../../src/config.js";
import { createLogger } from "../../src/logger.js";
import { checkAnswer, mutatedBody, type Mutation } from "./requestFuzz.js";

// Property: whatever the body, the answer is a 2xx or an OpenAI-shaped 4xx naming the field at fault;
// never a 5xx; the server stays healthy with nothing busy. Seeded, so a failure is reproducible
// (fast-check prints the seed and the shrunk counterexample). `npm test` runs FUZZ_RUNS (default 200)
// cases per endpoint; `npm run fuzz` runs thousands.
const runs = Number(process.env.FUZZ_RUNS ?? 200);
const seed = Number(process.env.FUZZ_SEED ?? 20261123);

let server: TestServer;
beforeAll(async () => {
    server = await startTestServer({
        models: [
            {id: "fake", task: "chat", path: tinyChatModelPath, aliases: ["gpt-4o-mini"]},
            {id: "tiny-bert", task: "embeddings", path: tinyBertPath, maxInputTokens: 64},
            // A real engine too: grammars, tool templates and the context check only exist there.
            {id: "real", task: "chat", path: tinyToolsModelPath, contextSize: 256, parallel: 2}
        ],
        config: {workers: 1},
        factories: {chat: async (entry) => entry.id === "fake"
            ? new FakeChatEngine("fake", {pieces: ["fu", "zz"]})
            : chatCapability.createEngine(entry, {config: defaultConfig, logger: createLogger("silent"), workers: () => {
                throw new Error("chat needs no worker pool");
            }})}
    });
});
afterAll(() => server.stop());

async function send(path: string, mutation: Mutation) {
    const response = await fetch(`${server.url}${path}`, {method: "POST", headers: {"Content-Type": mutation.contentType}, body: mutation.body});
    return checkAnswer(response, mutation);
}

const chatBase = {model: "fake", messages: [{role: "user", content: "hi"}], max_tokens: 5};
const chatFields = ["model", "messages", "temperature", "top_p", "max_tokens", "max_completion_tokens", "n", "stop", "seed",
    "frequency_penalty", "presence_penalty", "logit_bias", "response_format", "stream", "stream_options", "tools", "tool_choice",
    "parallel_tool_calls", "logprobs", "top_logprobs", "user", "functions", "function_call", "unknown_field"];
const embeddingsBase = {model: "tiny-bert", input: "hello"};
const embeddingsFields = ["model", "input", "encoding_format", "dimensions", "user", "unknown_field"];

const property = (path: string, base: Record<string, unknown>, fields: string[]) =>
    fc.asyncProperty(mutatedBody(base, fields), async (mutation) => {
        const problem = await send(path, mutation);
        expect(problem, `${mutation.contentType} ${mutation.body.slice(0, 500)}`).toBeNull();
    });

describe(`fuzz (${runs} cases per endpoint, seed ${seed})`, () => {
    it("POST /v1/chat/completions", async () => {
        await fc.assert(property("/v1/chat/completions", chatBase, chatFields), {seed, numRuns: runs});
    }, 600_000);

    it("POST /v1/chat/completions on a real (tiny) model", async () => {
        await fc.assert(property("/v1/chat/completions", {...chatBase, model: "real"}, chatFields), {seed, numRuns: Math.ceil(runs / 4)});
    }, 600_000);

    it("POST /v1/embeddings", async () => {
        await fc.assert(property("/v1/embeddings", embeddingsBase, embeddingsFields), {seed, numRuns: runs});
    }, 600_000);

    it("GET /v1/models/{id} and odd methods and paths", async () => {
        await fc.assert(fc.asyncProperty(
            fc.string({unit: "binary", maxLength: 60}), fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"),
            fc.constantFrom("/v1/models/", "/v1/", "/v1/chat/completions/", "/", "/health/", "/metrics/"),
            async (tail, method, prefix) => {
                const response = await fetch(`${server.url}${prefix}${encodeURIComponent(tail)}`, {method});
                const text = await response.text();
                expect(response.status, `${method} ${prefix}${tail}: ${text.slice(0, 200)}`).toBeLessThan(500);
                if (response.status >= 400 && method !== "HEAD")
                    expect(JSON.parse(text).error.message).toBeTypeOf("string");
            }), {seed, numRuns: runs});
    }, 600_000);

    it("a body over the limit is a 413, and the server is healthy with nothing busy afterwards", async () => {
        const huge = await fetch(`${server.url}/v1/chat/completions`, {method: "POST", headers: {"Content-Type": "application/json"},
            body: JSON.stringify({...chatBase, messages: [{role: "user", content: "x".repeat(11_000_000)}]})});
        expect(huge.status).toBe(413);
        const health = await (await fetch(`${server.url}/health`)).json() as {status: string, models: Record<string, unknown>};
        expect(health.status).toBe("ok");
        for (const [model, load] of Object.entries(health.models as Record<string, {busy: number, waiting: number}>))
            expect(load, model).toMatchObject({busy: 0, waiting: 0});
    });
});
