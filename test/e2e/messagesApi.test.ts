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
beforeAll(async () => {
    server = await startTestServer({
        models: [
            {id: "stories", task: "chat", path: storiesModelPath, contextSize: 512, parallel: 2},
            {id: "tools", task: "chat", path: tinyToolsModelPath, contextSize: 512, parallel: 2},
            {id: "fake", task: "chat", path: storiesModelPath}
        ],
        config: {apiKeys: [key]},
        factories: {chat: async (entry) => entry.id === "fake"
            ? new FakeChatEngine("fake", {pieces: ["Hel", "lo", " world"]})
            : (chatCapability as Capability).createEngine(entry, {config: {...defaultConfig, gpu: "off"}, logger: createLogger("silent"), workers: () => {
                throw new Error("chat needs no worker pool");
            }})}
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
        expect(await response.json()).toEqual({type: "error", error: {type: "invalid_request_error", message: expect.stringContaining("max_tokens")}});
    });
});
