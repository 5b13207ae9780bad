import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
import { readSse, startTestServer, type TestServer } from "../support/startTestServer.js";
import { storiesModelPath, tinyToolsModelPath } from "../support/testModels.js";
import type { Capability } from "../../src/capabilities/Capability.js";
import { chatCapability } from "../../src/capabilities/chat/chatCapability.js";
import { defaultConfig } from "../../src/config.js";
import { createLogger } from "../../src/logger.js";

// Anthropic's Messages API with the official @anthropic-ai/sdk, unchanged, against the server:
// real tiny models (stories260K for text, the tools template model for tool_use) and a scripted engine.
const key = "sk-messages-test";
let server: TestServer;
let client: Anthropic;
/** The scripted engines, by model id: `fake` answers "Hello world"; `thinker` thinks first; `cached` says 2 of its 3 prompt tokens came from the prompt cache. */
const fakes = new Map<string, FakeChatEngine>();
const fakeScripts: Record<string, ConstructorParameters<typeof FakeChatEngine>[1]> = {
    fake: {pieces: ["Hel", "lo", " world"]},
    thinker: {pieces: ["<think>", "Let me", " think.", "</think>", "\n\n", "Hi", " there."], info: {reasoningFormat: "think-tags"}},
    cached: {pieces: ["Hel", "lo"], cachedPromptTokens: 2}
};
const logLines: string[] = [];
beforeAll(async () => {
    server = await startTestServer({
        models: [
            {id: "stories", task: "chat", path: storiesModelPath, contextSize: 512, parallel: 2},
            {id: "tools", task: "chat", path: tinyToolsModelPath, contextSize: 512, parallel: 2},
            ...Object.keys(fakeScripts).map((id) => ({id, task: "chat", path: storiesModelPath}))
        ],
        config: {apiKeys: [key], logLevel: "info"},
        logLines,
        factories: {chat: async (entry) => {
            if (fakeScripts[entry.id] != null) {
                const fake = new FakeChatEngine(entry.id, fakeScripts[entry.id]);
                fakes.set(entry.id, fake);
                return fake;
            }
            return (chatCapability as Capability).createEngine(entry, {config: {...defaultConfig, gpu: "off"}, logger: createLogger("silent"), workers: () => {
                throw new Error("chat needs no worker pool");
            }});
        }}
    });
    client = new Anthropic({baseURL: server.url, apiKey: key, maxRetries: 0});
});
afterAll(() => server.stop());

/** `temperature` is an API field this SDK version leaves out of its types; the server reads it. */
const greedy = (params: Anthropic.MessageCreateParamsNonStreaming) => ({...params, temperature: 0}) as Anthropic.MessageCreateParamsNonStreaming;

const weather: Anthropic.Tool = {name: "get_weather", description: "The weather in a city", input_schema: {type: "object", properties: {city: {type: "string", enum: ["Paris", "Rome", "Oslo"]}}, required: ["city"]}};

describe("POST /v1/messages with @anthropic-ai/sdk", () => {
    it("messages.create: a Message with a text block, stop reason and usage", async () => {
        const message = await client.messages.create(greedy({model: "stories", max_tokens: 20, messages: [{role: "user", content: "Once upon a time"}]}));
        expect(message).toMatchObject({type: "message", role: "assistant", model: "stories", stop_sequence: null});
        expect(message.id).toMatch(/^msg_/);
        expect(message.content[0].type).toBe("text");
        expect((message.content[0] as {text: string}).text.length).toBeGreaterThan(5);
        expect(["max_tokens", "end_turn"]).toContain(message.stop_reason);
        expect(message.usage.input_tokens).toBeGreaterThan(0);
        expect(message.usage.output_tokens).toBeGreaterThan(0);
    });

    it("greedy output equals chat completions' for the same conversation, system prompt and stop sequence reported", async () => {
        const anthropic = await client.messages.create(greedy({model: "stories", max_tokens: 30, system: "Tell a story.", messages: [{role: "user", content: "Once upon a time"}]}));
        const chat = await server.post("/v1/chat/completions", {model: "stories", max_tokens: 30, temperature: 0, messages: [{role: "system", content: "Tell a story."}, {role: "user", content: "Once upon a time"}]},
            {headers: {"Content-Type": "application/json", Authorization: `Bearer ${key}`}});
        const text = (await chat.json() as {choices: {message: {content: string}}[]}).choices[0].message.content;
        expect((anthropic.content[0] as {text: string}).text).toBe(text);
        const words = text.split(" ");
        const stop = words.slice(2, 4).join(" ");
        const stopped = await client.messages.create(greedy({model: "stories", max_tokens: 30, system: "Tell a story.", messages: [{role: "user", content: "Once upon a time"}], stop_sequences: [stop]}));
        expect(stopped).toMatchObject({stop_reason: "stop_sequence", stop_sequence: stop});
        expect((stopped.content[0] as {text: string}).text).toBe(text.slice(0, text.indexOf(stop)));
    });

    it("messages.stream: the SDK assembles the same message from the events, finalMessage() included", async () => {
        const stream = client.messages.stream({model: "fake", max_tokens: 20, messages: [{role: "user", content: "hi"}]});
        const texts: string[] = [];
        stream.on("text", (text) => texts.push(text));
        const final = await stream.finalMessage();
        expect(texts.join("")).toBe("Hello world");
        expect(final).toMatchObject({role: "assistant", content: [{type: "text", text: "Hello world"}], stop_reason: "end_turn"});
    });

    it("the events folded by the SDK (finalMessage) are the Message answered without a stream: text, a stop sequence, a forced tool call, thinking", async () => {
        const requests: Anthropic.MessageCreateParamsNonStreaming[] = [
            greedy({model: "stories", max_tokens: 30, messages: [{role: "user", content: "Once upon a time"}]}),
            greedy({model: "stories", max_tokens: 30, stop_sequences: ["was"], messages: [{role: "user", content: "Once upon a time"}]}),
            greedy({model: "tools", max_tokens: 200, tools: [weather], tool_choice: {type: "tool", name: "get_weather"}, messages: [{role: "user", content: "Weather in Paris?"}]}),
            {model: "thinker", max_tokens: 2000, thinking: {type: "enabled", budget_tokens: 1024}, messages: [{role: "user", content: "hi"}]}
        ];
        // Each answer has its own id (its tool calls' ids derive from it); the second request finds its prompt cached (a
        // cache read instead of input tokens); `parsed_output` is the SDK's own.
        const same = ({id: _id, usage, content, ...message}: Anthropic.Message & {parsed_output?: unknown}) => JSON.parse(JSON.stringify({
            ...message, parsed_output: undefined, content: content.map((block) => block.type === "tool_use" ? {...block, id: "toolu"} : block),
            usage: {...usage, input_tokens: usage.input_tokens + (usage.cache_read_input_tokens ?? 0), cache_read_input_tokens: undefined}
        }));
        for (const request of requests) {
            const plain = await client.messages.create(request);
            const folded = await client.messages.stream(request).finalMessage();
            expect(same(folded)).toEqual(same(plain));
        }
    });

    it("streams Anthropic's events in Anthropic's order", async () => {
        const response = await fetch(`${server.url}/v1/messages`, {method: "POST", headers: {"Content-Type": "application/json", "x-api-key": key, "anthropic-version": "2023-06-01"},
            body: JSON.stringify({model: "fake", max_tokens: 20, stream: true, messages: [{role: "user", content: "hi"}]})});
        const {events} = await readSse(response);
        expect(events.map((event) => event.event)).toEqual(["message_start", "ping", "content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]);
        expect(JSON.parse(events.at(-2)!.data)).toMatchObject({type: "message_delta", delta: {stop_reason: "end_turn"}, usage: {output_tokens: 3}});
    });

    it("a forced tool (tool_choice tool) gives a tool_use block whose input follows the schema, and a tool_result round trip", async () => {
        const first = await client.messages.create({
            model: "tools", max_tokens: 200, tools: [weather], tool_choice: {type: "tool", name: "get_weather", disable_parallel_tool_use: true},
            messages: [{role: "user", content: "Weather in Paris?"}]
        });
        expect(first.stop_reason).toBe("tool_use");
        const use = first.content.find((block) => block.type === "tool_use")!;
        expect(use).toMatchObject({type: "tool_use", name: "get_weather", id: expect.stringMatching(/^toolu_/)});
        expect(typeof (use as {input: {city: unknown}}).input.city).toBe("string");
        const second = await client.messages.create({
            model: "tools", max_tokens: 10, tools: [weather],
            messages: [
                {role: "user", content: "Weather in Paris?"},
                {role: "assistant", content: first.content},
                {role: "user", content: [{type: "tool_result", tool_use_id: (use as {id: string}).id, content: "sunny, 21 C"}]}
            ]
        });
        expect(second.role).toBe("assistant");
        const total = (usage: Anthropic.Usage) => usage.input_tokens + (usage.cache_read_input_tokens ?? 0);
        expect(total(second.usage)).toBeGreaterThan(total(first.usage));
        // The follow-up reuses the conversation's KV cache (the prompt cache), reported as Anthropic reports cache reads.
        expect(second.usage.cache_read_input_tokens).toBeGreaterThan(0);
    });

    it("output_config.format constrains the answer to a JSON schema", async () => {
        const message = await client.messages.create({model: "stories", max_tokens: 80,
            output_config: {format: {type: "json_schema", schema: {type: "object", properties: {name: {type: "string"}}, required: ["name"], additionalProperties: false}}},
            messages: [{role: "user", content: "Once upon a time"}]});
        if (message.stop_reason === "end_turn")
            expect(JSON.parse((message.content[0] as {text: string}).text)).toEqual({name: expect.any(String)});
        expect((message.content[0] as {text: string}).text.startsWith("{")).toBe(true);
    });

    it("messages.countTokens counts the prompt, tools included", async () => {
        const plain = await client.messages.countTokens({model: "tools", messages: [{role: "user", content: "Weather in Paris?"}]});
        const withTools = await client.messages.countTokens({model: "tools", messages: [{role: "user", content: "Weather in Paris?"}], tools: [weather]});
        expect(plain.input_tokens).toBeGreaterThan(0);
        expect(withTools.input_tokens).toBeGreaterThan(plain.input_tokens);
        const run = await client.messages.create({model: "tools", max_tokens: 1, messages: [{role: "user", content: "Weather in Paris?"}]});
        expect(run.usage.input_tokens + (run.usage.cache_read_input_tokens ?? 0)).toBe(plain.input_tokens);
    });

    it("a wrong key is the SDK's AuthenticationError; errors are in Anthropic's shape", async () => {
        const error = await new Anthropic({baseURL: server.url, apiKey: "wrong", maxRetries: 0}).messages.create({model: "stories", max_tokens: 5, messages: [{role: "user", content: "hi"}]}).catch((caught) => caught);
        expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
        const missing = await client.messages.create({model: "nope", max_tokens: 5, messages: [{role: "user", content: "hi"}]}).catch((caught) => caught);
        expect(missing).toBeInstanceOf(Anthropic.NotFoundError);
        const response = await fetch(`${server.url}/v1/messages`, {method: "POST", headers: {"Content-Type": "application/json", "x-api-key": key},
            body: JSON.stringify({model: "stories", messages: [{role: "user", content: "hi"}]})});
        expect(response.status).toBe(400);
        expect(await response.json()).toEqual({type: "error", error: {type: "invalid_request_error", message: "max_tokens: Field required"}, request_id: response.headers.get("request-id")});
        const longStop = await client.messages.create({model: "stories", max_tokens: 5, messages: [{role: "user", content: "hi"}], stop_sequences: ["x".repeat(4097)]})
            .catch((caught) => caught);
        expect(longStop).toBeInstanceOf(Anthropic.BadRequestError);
        expect(longStop.error.error.message).toMatch(/^stop_sequences\.0: /);
    });
});

/** A JSON POST with the key, as Anthropic's SDKs send it. */
const post = (path: string, body: unknown, apiKey = key) => fetch(`${server.url}${path}`, {
    method: "POST", headers: {"Content-Type": "application/json", "x-api-key": apiKey, "anthropic-version": "2023-06-01"}, body: JSON.stringify(body)
});

describe("what Claude Code sends and needs", () => {
    it("system messages anywhere in `messages` (beta endpoint, `?beta=true`): their text joins the system prompt in order; an empty one with only output_config is dropped", async () => {
        const {data, response} = await client.beta.messages.create({
            model: "fake", max_tokens: 20, system: [{type: "text", text: "You are an agent."}],
            betas: ["interleaved-thinking-2025-05-14", "context-management-2025-06-27"],
            thinking: {type: "adaptive", display: "updates"}, output_config: {effort: "medium"},
            messages: [
                {role: "user", content: "Say hello"},
                {role: "system", content: [{type: "text", text: "Environment: linux."}]},
                {role: "system", output_config: {effort: "high"}},
                {role: "assistant", content: "Hello"},
                {role: "system", content: "Agents: none."},
                {role: "user", content: "Again"}
            ]
        }).withResponse();
        expect(response.status).toBe(200);
        expect(data.content).toEqual([{type: "text", text: "Hello world"}]);
        const job = fakes.get("fake")!.jobs.at(-1)!;
        expect(job.turns).toEqual([
            {role: "system", content: "You are an agent.\n\nEnvironment: linux.\n\nAgents: none."},
            {role: "user", content: "Say hello"}, {role: "assistant", content: "Hello"}, {role: "user", content: "Again"}
        ]);
        // The system message's effort is the turn's; adaptive thinking has no budget.
        expect(job.reasoning).toEqual({enabled: true, budgetTokens: null, effort: "high"});
        // As Claude Code posts it: `?beta=true` and its betas.
        const raw = await fetch(`${server.url}/v1/messages?beta=true`, {method: "POST", body: JSON.stringify({model: "fake", max_tokens: 5, messages: [{role: "user", content: "hi"}, {role: "system", content: "env"}]}),
            headers: {"Content-Type": "application/json", "x-api-key": key, "anthropic-version": "2023-06-01", "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14"}});
        expect(raw.status).toBe(200);
        expect(fakes.get("fake")!.jobs.at(-1)!.turns[0]).toEqual({role: "system", content: "env"});
                // count_tokens takes the same messages: the scripted engine counts the words of the turns.
        const counted = await client.messages.countTokens({model: "fake", messages: [{role: "user", content: "one two"}, {role: "system", content: "three four five"}]});
        expect(counted.input_tokens).toBe(5);
    });

    it("every thinking form reaches the engine; display omitted returns the thinking block without its text, as Anthropic does", async () => {
        const forms: [Anthropic.Beta.BetaThinkingConfigParam, unknown, string][] = [
            [{type: "enabled", budget_tokens: 1024}, {enabled: true, budgetTokens: 1024}, "Let me think."],
            [{type: "enabled", budget_tokens: 1024, display: "omitted"}, {enabled: true, budgetTokens: 1024}, ""],
            [{type: "adaptive"}, {enabled: true, budgetTokens: null}, "Let me think."],
            [{type: "adaptive", display: "summarized"}, {enabled: true, budgetTokens: null}, "Let me think."],
            [{type: "adaptive", display: "updates"}, {enabled: true, budgetTokens: null}, "Let me think."],
            [{type: "adaptive", display: "omitted"}, {enabled: true, budgetTokens: null}, ""]
        ];
        for (const [thinking, reasoning, text] of forms) {
            const message = await client.beta.messages.create({model: "thinker", max_tokens: 2000, thinking, messages: [{role: "user", content: "hi"}]});
            expect(fakes.get("thinker")!.jobs.at(-1)!.reasoning).toEqual(reasoning);
            expect(message.content).toEqual([{type: "thinking", thinking: text, signature: expect.any(String)}, {type: "text", text: "Hi there."}]);
            const streamed = await client.beta.messages.stream({model: "thinker", max_tokens: 2000, thinking, messages: [{role: "user", content: "hi"}]}).finalMessage();
            expect(streamed.content).toEqual(message.content);
        }
        await client.messages.create({model: "thinker", max_tokens: 100, thinking: {type: "disabled"}, messages: [{role: "user", content: "hi"}]});
        expect(fakes.get("thinker")!.jobs.at(-1)!.reasoning).toEqual({enabled: false, budgetTokens: null});
        // Streamed with display omitted: the block opens, gets its signature and closes; no thinking_delta.
        const {events} = await readSse(await post("/v1/messages", {model: "thinker", max_tokens: 100, stream: true, thinking: {type: "adaptive", display: "omitted"}, messages: [{role: "user", content: "hi"}]}));
        const deltas = events.filter((event) => event.event === "content_block_delta").map((event) => JSON.parse(event.data).delta.type);
        expect(deltas).toEqual(["signature_delta", "text_delta", "text_delta"]);
    });

    it("a wrong thinking value is a 400 naming the field that is wrong, in Anthropic's words", async () => {
        const cases: [unknown, string][] = [
            [{type: "enabled"}, "thinking.budget_tokens: Field required"],
            [{type: "adaptive", display: "full"}, "thinking.display: Input should be 'summarized', 'omitted' or 'updates'"],
            [{type: "sometimes"}, "thinking.type: Input tag 'sometimes' found using 'type' does not match any of the expected tags: 'enabled', 'adaptive', 'disabled', 'between_tools'"],
            [{type: "enabled", budget_tokens: 0}, "thinking.budget_tokens: Input should be greater than or equal to 1"]
        ];
        for (const [thinking, message] of cases) {
            const error = await client.messages.create({model: "thinker", max_tokens: 100, thinking: thinking as Anthropic.ThinkingConfigParam, messages: [{role: "user", content: "hi"}]}).catch((caught) => caught);
            expect(error).toBeInstanceOf(Anthropic.BadRequestError);
            expect(error.error).toEqual({type: "error", error: {type: "invalid_request_error", message}, request_id: error.requestID});
        }
        const tooBig = await client.messages.create({model: "thinker", max_tokens: 100, thinking: {type: "enabled", budget_tokens: 100}, messages: [{role: "user", content: "hi"}]}).catch((caught) => caught);
        expect(tooBig.error.error.message).toBe("thinking.budget_tokens: `max_tokens` must be greater than `thinking.budget_tokens`.");
    });

    it("errors of the shared chat path name the fields the client sent (tools.N.input_schema, messages.N), as Anthropic words paths", async () => {
        // A tool whose schema cannot be forced: the chat path names `tools[0].function.parameters`, the client sent `tools.1.input_schema`.
        const tools: Anthropic.Tool[] = [
            {name: "later", input_schema: {type: "object"}, defer_loading: true} as Anthropic.Tool,
            {name: "odd", input_schema: {type: "object", properties: {a: {type: "string", pattern: "(?<=x)y"}}}}
        ];
        const error = await client.messages.create({model: "tools", max_tokens: 10, tools, tool_choice: {type: "any"}, messages: [{role: "user", content: "hi"}]}).catch((caught) => caught);
        expect(error).toBeInstanceOf(Anthropic.BadRequestError);
        expect(error.error.error.message).toMatch(/^tools\.1\.input_schema\.properties\.a\.pattern: /);
        const unanswered = await client.messages.create({model: "tools", max_tokens: 10, messages: [
            {role: "user", content: "hi"}, {role: "assistant", content: [{type: "tool_use", id: "toolu_1", name: "w", input: {}}]}, {role: "user", content: "well?"}
        ]}).catch((caught) => caught);
        expect(unanswered.error.error.message).toBe("messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` block in the next message.");
    });

    it("x-should-retry: false on 400, 401, 403-like and 404 answers, so clients fail fast; request-id on every response, the id in the log", async () => {
        const answers = [
            await post("/v1/messages", {model: "fake", messages: [{role: "user", content: "hi"}]}),
            await post("/v1/messages", {model: "fake", max_tokens: 5, messages: [{role: "user", content: "hi"}]}, "wrong-key"),
            await post("/v1/messages", {model: "nope", max_tokens: 5, messages: [{role: "user", content: "hi"}]}),
            await post("/v1/messages/count_tokens", {model: "fake", messages: [{role: "tool", content: "hi"}]})
        ];
        expect(answers.map((response) => response.status)).toEqual([400, 401, 404, 400]);
        for (const response of answers) {
            expect(response.headers.get("x-should-retry")).toBe("false");
            const body = await response.json() as {request_id: string};
            expect(response.headers.get("request-id")).toMatch(/^req_[0-9a-f]{24}$/);
            expect(body.request_id).toBe(response.headers.get("request-id"));
            expect(response.headers.get("x-request-id")).toBe(response.headers.get("request-id"));
        }
        // A success carries it too (and no x-should-retry); the SDK reads it as the request's id; the log line names it.
        const {data, request_id} = await client.messages.create({model: "fake", max_tokens: 5, messages: [{role: "user", content: "hi"}]}).withResponse();
        expect(data.type).toBe("message");
        expect(request_id).toMatch(/^req_/);
        expect(logLines.some((line) => line.includes(`POST /v1/messages id="${request_id}" status=200`))).toBe(true);
        const streamed = await post("/v1/messages", {model: "fake", max_tokens: 5, stream: true, messages: [{role: "user", content: "hi"}]});
        expect(streamed.headers.get("request-id")).toMatch(/^req_/);
        expect(streamed.headers.get("x-should-retry")).toBeNull();
        await streamed.text();
        // The SDK does not retry what the header says not to (a client that would, like Claude Code, obeys it too).
        let calls = 0;
        const counting = new Anthropic({baseURL: server.url, apiKey: "wrong-key", maxRetries: 3, fetch: (url, init) => (calls++, fetch(url, init))});
        expect(await counting.messages.create({model: "fake", max_tokens: 5, messages: [{role: "user", content: "hi"}]}).catch((caught) => caught)).toBeInstanceOf(Anthropic.AuthenticationError);
        expect(calls).toBe(1);
    });

    it("usage: message_start and message_delta carry the same prompt usage (cache reads included), which is the final message's", async () => {
        const {events} = await readSse(await post("/v1/messages", {model: "cached", max_tokens: 20, stream: true, messages: [{role: "user", content: "hi"}]}));
        const start = JSON.parse(events[0].data).message.usage;
        const delta = JSON.parse(events.find((event) => event.event === "message_delta")!.data).usage;
        expect(start).toEqual({input_tokens: 1, cache_read_input_tokens: 2, cache_creation_input_tokens: 0, output_tokens: 0});
        expect(delta).toEqual({input_tokens: 1, cache_read_input_tokens: 2, cache_creation_input_tokens: 0, output_tokens: 2, output_tokens_details: {thinking_tokens: 0}});
        const final = await client.messages.stream({model: "cached", max_tokens: 20, messages: [{role: "user", content: "hi"}]}).finalMessage();
        const plain = await client.messages.create({model: "cached", max_tokens: 20, messages: [{role: "user", content: "hi"}]});
        expect(final.usage).toEqual(plain.usage);
        expect(final.usage).toMatchObject(delta);

        // The real engine: a follow-up reads the conversation from the prompt cache, and both events say how much.
        const conversation = {model: "tools", max_tokens: 3, temperature: 0, stream: true, messages: [{role: "user", content: "Weather in Paris today, and tomorrow?"}]};
        await (await post("/v1/messages", conversation)).text();
        const again = (await readSse(await post("/v1/messages", conversation))).events;
        const realStart = JSON.parse(again[0].data).message.usage;
        const realDelta = JSON.parse(again.find((event) => event.event === "message_delta")!.data).usage;
        expect(realStart.cache_read_input_tokens).toBeGreaterThan(0);
        expect(realDelta).toMatchObject({input_tokens: realStart.input_tokens, cache_read_input_tokens: realStart.cache_read_input_tokens, cache_creation_input_tokens: 0});
    });
});
