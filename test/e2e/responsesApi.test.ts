import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
import { readSse, startTestServer, type TestServer } from "../support/startTestServer.js";
import { storiesModelPath, tinyToolsModelPath } from "../support/testModels.js";
import type { Capability } from "../../src/capabilities/Capability.js";
import { chatCapability } from "../../src/capabilities/chat/chatCapability.js";
import { defaultConfig } from "../../src/config.js";
import { createLogger } from "../../src/logger.js";

// OpenAI's Responses API with the official `openai` client, unchanged, against the server.
const key = "sk-responses-test";
let server: TestServer;
let client: OpenAI;
beforeAll(async () => {
    server = await startTestServer({
        models: [
            {id: "stories", task: "chat", path: storiesModelPath, contextSize: 1024, parallel: 2},
            {id: "tools", task: "chat", path: tinyToolsModelPath, contextSize: 1024, parallel: 2},
            {id: "fake", task: "chat", path: storiesModelPath}
        ],
        config: {apiKeys: [key, "sk-other-key"]}, apiKey: key,
        factories: {chat: async (entry) => entry.id === "fake"
            ? new FakeChatEngine("fake", {pieces: ["Hel", "lo", " world"]})
            : (chatCapability as Capability).createEngine(entry, {config: {...defaultConfig, gpu: "off"}, logger: createLogger("silent"), workers: () => {
                throw new Error("chat needs no worker pool");
            }})}
    });
    client = server.client;
});
afterAll(() => server.stop());

const weather = {type: "function" as const, name: "get_weather", description: "The weather in a city", strict: true,
    parameters: {type: "object", properties: {city: {type: "string", enum: ["Paris", "Rome", "Oslo"]}}, required: ["city"], additionalProperties: false}};

describe("POST /v1/responses with the openai client", () => {
    it("responses.create: output_text, usage, and the same greedy text as chat completions", async () => {
        const response = await client.responses.create({model: "stories", input: "Once upon a time", instructions: "Tell a story.", max_output_tokens: 30, temperature: 0});
        expect(response).toMatchObject({object: "response", model: "stories", instructions: "Tell a story."});
        expect(response.id).toMatch(/^resp_/);
        const chat = await client.chat.completions.create({model: "stories", max_tokens: 30, temperature: 0, messages: [{role: "system", content: "Tell a story."}, {role: "user", content: "Once upon a time"}]});
        expect(response.output_text).toBe(chat.choices[0].message.content);
        expect(response.usage).toMatchObject({input_tokens: chat.usage!.prompt_tokens, output_tokens: chat.usage!.completion_tokens});
        expect(["completed", "incomplete"]).toContain(response.status);
        if (response.status === "incomplete")
            expect(response.incomplete_details).toEqual({reason: "max_output_tokens"});
    });

    it("streams the typed events with sequence numbers in OpenAI's order", async () => {
        const stream = await client.responses.create({model: "fake", input: "hi", stream: true});
        const events: {type: string, sequence_number: number}[] = [];
        for await (const event of stream)
            events.push(event);
        expect(events.map((event) => event.type)).toEqual([
            "response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
            "response.output_text.delta", "response.output_text.delta", "response.output_text.delta",
            "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"
        ]);
        expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
        expect((events.at(-1) as unknown as {response: OpenAI.Responses.Response}).response.output_text ?? "").toBeDefined();
    });

    it("a forced function tool, then a function_call_output round trip", async () => {
        const first = await client.responses.create({model: "tools", input: "Weather in Paris?", tools: [weather], tool_choice: {type: "function", name: "get_weather"}, parallel_tool_calls: false, max_output_tokens: 200});
        const call = first.output.find((item) => item.type === "function_call")!;
        expect(call).toMatchObject({type: "function_call", name: "get_weather"});
        expect(["Paris", "Rome", "Oslo"]).toContain(JSON.parse((call as {arguments: string}).arguments).city);
        const second = await client.responses.create({model: "tools", tools: [weather], max_output_tokens: 5, input: [
            {role: "user", content: "Weather in Paris?"},
            call as OpenAI.Responses.ResponseFunctionToolCall,
            {type: "function_call_output", call_id: (call as {call_id: string}).call_id, output: "sunny, 21 C"}
        ]});
        expect(second.status === "completed" || second.status === "incomplete").toBe(true);
        expect(second.usage!.input_tokens).toBeGreaterThan(first.usage!.input_tokens);
    });

    it("text.format json_schema constrains the answer", async () => {
        const response = await client.responses.create({model: "stories", input: "Once upon a time", max_output_tokens: 80,
            text: {format: {type: "json_schema", name: "person", schema: {type: "object", properties: {name: {type: "string"}}, required: ["name"], additionalProperties: false}, strict: true}}});
        expect(response.output_text.startsWith("{")).toBe(true);
        if (response.status === "completed")
            expect(JSON.parse(response.output_text)).toEqual({name: expect.any(String)});
    });

    it("previous_response_id continues a stored conversation, reading it from the prompt cache; GET, input_items and DELETE", async () => {
        const first = await client.responses.create({model: "stories", input: "Once upon a time there was a little girl named Lily. She loved to play outside.", max_output_tokens: 20, temperature: 0});
        const second = await client.responses.create({model: "stories", previous_response_id: first.id, input: "Then what happened?", max_output_tokens: 10, temperature: 0});
        expect(second.previous_response_id).toBe(first.id);
        expect(second.usage!.input_tokens).toBeGreaterThan(first.usage!.input_tokens + first.usage!.output_tokens);
        expect(second.usage!.input_tokens_details.cached_tokens).toBeGreaterThan(0);
        expect((await client.responses.retrieve(first.id)).output_text).toBe(first.output_text);
        const items = await client.responses.inputItems.list(second.id);
        expect(items.data.map((item) => (item as {role?: string}).role)).toEqual(["user"]);
        // Another key sees none of it.
        const other = new OpenAI({baseURL: `${server.url}/v1`, apiKey: "sk-other-key", maxRetries: 0});
        expect(await other.responses.retrieve(first.id).catch((error) => error)).toBeInstanceOf(OpenAI.NotFoundError);
        await client.responses.delete(first.id);
        expect(await client.responses.retrieve(first.id).catch((error) => error)).toBeInstanceOf(OpenAI.NotFoundError);
        const gone = await client.responses.create({model: "stories", previous_response_id: first.id, input: "x"}).catch((error) => error);
        expect(gone).toBeInstanceOf(OpenAI.NotFoundError);
        expect(gone.param).toBe("previous_response_id");
    });

    it("a built-in tool is a 400 naming it", async () => {
        const error = await client.responses.create({model: "stories", input: "x", tools: [{type: "web_search"}]}).catch((caught) => caught);
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        expect(error.param).toBe("tools[0].type");
        expect(error.message).toContain("web_search");
    });

    it("streams function calls as function_call items with argument deltas", async () => {
        const response = await fetch(`${server.url}/v1/responses`, {method: "POST", headers: {"Content-Type": "application/json", Authorization: `Bearer ${key}`},
            body: JSON.stringify({model: "tools", input: "Weather?", tools: [weather], tool_choice: "required", parallel_tool_calls: false, stream: true, max_output_tokens: 200})});
        const {events} = await readSse(response);
        const types = events.map((event) => event.event);
        expect(types.slice(0, 3)).toEqual(["response.created", "response.in_progress", "response.output_item.added"]);
        expect(types).toContain("response.function_call_arguments.delta");
        expect(types.slice(-3)).toEqual(["response.function_call_arguments.done", "response.output_item.done", "response.completed"]);
    });
});
