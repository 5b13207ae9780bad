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
const logLines: string[] = [];
/** A scripted model with a tool-call format (it writes no calls: what it is offered is read from its jobs) and a scripted thinker. */
const scripted: Record<string, () => FakeChatEngine> = {
    "fake": () => new FakeChatEngine("fake", {pieces: ["Hel", "lo", " world"]}),
    "fake-tools": () => new FakeChatEngine("fake-tools", {pieces: ["Done."], info: {toolCallFormat: {prefix: "<tool_call>\n{\"name\": \"", paramsPrefix: "\", \"arguments\": ", suffix: "}\n</tool_call>", betweenCalls: "\n"}}}),
    "thinker": () => new FakeChatEngine("thinker", {pieces: ["<think>", "Plan it.", "</think>", "Done."], info: {reasoningFormat: "think-tags"}})
};
beforeAll(async () => {
    server = await startTestServer({
        models: [
            {id: "stories", task: "chat", path: storiesModelPath, contextSize: 1024, parallel: 2},
            {id: "tools", task: "chat", path: tinyToolsModelPath, contextSize: 1024, parallel: 2},
            ...Object.keys(scripted).map((id) => ({id, task: "chat", path: storiesModelPath}))
        ],
        config: {apiKeys: [key, "sk-other-key"], logLevel: "warn"}, apiKey: key, logLines,
        factories: {chat: async (entry) => scripted[entry.id]?.()
            ?? (chatCapability as Capability).createEngine(entry, {config: {...defaultConfig, gpu: "off"}, logger: createLogger("silent"), workers: () => {
                throw new Error("chat needs no worker pool");
            }})}
    });
    client = server.client;
});

/** The jobs a scripted model was given. */
const jobsOf = async (id: string) => ((await server.engines.engineFor(id, "chat")).engine as unknown as FakeChatEngine).jobs;
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

    it("the stream folded by the SDK (finalResponse) is the response answered without a stream: reasoning, text, a forced call", async () => {
        // Ids and timestamps are each response's own, the second request finds its prompt cached, and `parsed` and
        // `output_parsed` are the SDK's own additions; logprobs equal to 3 decimals (a cached prompt changes the batches'
        // shapes); the rest must be the same.
        const same = (response: object) => JSON.parse(JSON.stringify(response, (key, value) =>
            ["id", "call_id", "created_at", "cached_tokens"].includes(key) ? "-" : ["parsed", "output_parsed"].includes(key) ? undefined
                : key === "logprob" ? Number(value.toFixed(3)) : value));
        const asked: Omit<OpenAI.Responses.ResponseCreateParamsNonStreaming, "stream">[] = [
            {model: "thinker", input: "hi", include: ["reasoning.encrypted_content"]},
            {model: "stories", input: "Once upon a time", max_output_tokens: 12, temperature: 0, include: ["message.output_text.logprobs"], top_logprobs: 2},
            {model: "tools", input: "Weather in Paris?", tools: [weather], tool_choice: {type: "function", name: "get_weather"}, temperature: 0, max_output_tokens: 40}
        ];
        for (const request of asked) {
            const plain = await client.responses.create({...request, stream: false});
            const folded = await client.responses.stream(request).finalResponse();
            expect(same(folded), request.model).toEqual(same(plain));
        }
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

/** Codex's tool kinds, as it sends them (a namespace of functions with a custom tool in it, a built-in it cannot have here). */
const clock: OpenAI.Responses.NamespaceTool = {type: "namespace", name: "clock", description: "Tools for time.", tools: [
    {type: "function", name: "sleep", description: "Waits.", parameters: {type: "object", properties: {seconds: {type: "integer", enum: [1, 2, 3]}}, required: ["seconds"], additionalProperties: false}}
]};
const exec: OpenAI.Responses.CustomTool = {type: "custom", name: "exec", description: "Runs a shell command.", format: {type: "grammar", syntax: "lark", definition: "start: /.+/"}};
const webSearch = {type: "web_search", external_web_access: false} as OpenAI.Responses.Tool;

describe("Codex's tools: namespaces, custom tools, additional_tools, built-in tools", () => {
    it("a namespaced function is offered as namespace__name and comes back as a function_call with its namespace; its output is accepted back", async () => {
        const first = await client.responses.create({model: "tools", input: "Wait a bit.", tools: [clock, weather], tool_choice: {type: "function", name: "sleep"},
            parallel_tool_calls: false, temperature: 0, max_output_tokens: 200, store: false});
        const call = first.output.find((item) => item.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
        expect(call).toMatchObject({type: "function_call", name: "sleep", namespace: "clock", status: "completed"});
        expect([1, 2, 3]).toContain(JSON.parse(call.arguments).seconds);
        expect(call.id).toMatch(/^fc_/);
        const second = await client.responses.create({model: "tools", tools: [clock, weather], max_output_tokens: 5, store: false, input: [
            {role: "user", content: "Wait a bit."}, ...first.output as OpenAI.Responses.ResponseInputItem[],
            {type: "function_call_output", call_id: call.call_id, output: "slept"}
        ]});
        expect(second.usage!.input_tokens).toBeGreaterThan(first.usage!.input_tokens);
        // Streamed: the item says its namespace from output_item.added on.
        const stream = await client.responses.create({model: "tools", input: "Wait a bit.", tools: [clock, weather], tool_choice: {type: "function", name: "sleep"},
            parallel_tool_calls: false, temperature: 0, max_output_tokens: 200, stream: true});
        const events: OpenAI.Responses.ResponseStreamEvent[] = [];
        for await (const event of stream)
            events.push(event);
        const added = events.find((event) => event.type === "response.output_item.added") as OpenAI.Responses.ResponseOutputItemAddedEvent;
        expect(added.item).toMatchObject({type: "function_call", name: "sleep", namespace: "clock", arguments: "", status: "in_progress"});
        expect(events.find((event) => event.type === "response.function_call_arguments.done")).toMatchObject({name: "sleep", arguments: call.arguments});
        // What the model is offered.
        await client.responses.create({model: "fake-tools", input: "hi", tools: [clock]});
        expect((await jobsOf("fake-tools")).at(-1)!.tools!.functions).toEqual([{name: "clock__sleep", description: "Tools for time.\n\nWaits.", parameters: (clock.tools[0] as {parameters: unknown}).parameters}]);
    });

    it("a custom tool is a function of one string: its call is a custom_tool_call with the input, streamed with custom_tool_call_input events, and its output is accepted back", async () => {
        const request: OpenAI.Responses.ResponseCreateParamsNonStreaming = {model: "tools", input: "List the files.", tools: [exec], tool_choice: {type: "custom", name: "exec"}, temperature: 0, max_output_tokens: 120};
        const response = await client.responses.create(request);
        const call = response.output.find((item) => item.type === "custom_tool_call") as OpenAI.Responses.ResponseCustomToolCall & {status: string};
        expect(call).toMatchObject({type: "custom_tool_call", name: "exec", status: "completed", input: expect.any(String)});
        expect(call.id).toMatch(/^ctc_/);
        expect(call).not.toHaveProperty("arguments");

        const stream = await client.responses.create({...request, stream: true});
        const events: OpenAI.Responses.ResponseStreamEvent[] = [];
        for await (const event of stream)
            events.push(event);
        const types = events.map((event) => event.type);
        expect(types).not.toContain("response.function_call_arguments.delta");
        const done = events.find((event) => event.type === "response.custom_tool_call_input.done") as OpenAI.Responses.ResponseCustomToolCallInputDoneEvent;
        const deltas = events.filter((event) => event.type === "response.custom_tool_call_input.delta").map((event) => (event as {delta: string}).delta);
        // Greedy: the same call as without streaming.
        expect(done.input).toBe(call.input);
        expect(deltas.join("")).toBe(call.input);
        expect(types.slice(-2)).toEqual(["response.output_item.done", "response.completed"]);
        const streamedCall = (events.at(-1) as OpenAI.Responses.ResponseCompletedEvent).response.output.find((item) => item.type === "custom_tool_call");
        expect(streamedCall).toMatchObject({name: "exec", input: call.input, id: done.item_id});

        const second = await client.responses.create({model: "tools", tools: [exec], max_output_tokens: 5, input: [
            {role: "user", content: "List the files."}, call, {type: "custom_tool_call_output", call_id: call.call_id, output: "a.txt b.txt"}
        ]});
        expect(["completed", "incomplete"]).toContain(second.status);
        // What the model is offered.
        await client.responses.create({model: "fake-tools", input: "hi", tools: [exec]});
        expect((await jobsOf("fake-tools")).at(-1)!.tools!.functions[0]).toMatchObject({name: "exec", parameters: {type: "object", required: ["input"], properties: {input: {type: "string"}}}});
    });

    it("additional_tools input items (Codex's default-model request) join the request's tools; a bad tool in one is named where it is", async () => {
        const response = await client.responses.create({model: "fake-tools", tools: [weather], input: [
            {type: "additional_tools", role: "developer", tools: [{type: "namespace", name: "functions", description: "", tools: [exec]}, clock]},
            {role: "user", content: "hi"}
        ]});
        expect(response.output_text).toBe("Done.");
        expect((await jobsOf("fake-tools")).at(-1)!.tools!.functions.map((fn) => fn.name)).toEqual(["get_weather", "functions__exec", "clock__sleep"]);
        const error = await client.responses.create({model: "fake-tools", input: [
            {type: "additional_tools", role: "developer", tools: [{type: "namespace", name: "functions", description: "", tools: [exec, {type: "function", name: ""}]}]}
        ] as never}).catch((caught) => caught);
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        expect(error.param).toBe("input[0].tools[0].tools[1].name");
    });

    it("built-in tools are left out of the model's tools with a warning in the log and in the response; forcing one is a 400", async () => {
        logLines.length = 0;
        const response = await client.responses.create({model: "fake-tools", input: "hi", tools: [webSearch, clock]});
        expect((await jobsOf("fake-tools")).at(-1)!.tools!.functions.map((fn) => fn.name)).toEqual(["clock__sleep"]);
        expect((response as {warnings?: unknown}).warnings).toEqual([{type: "unsupported_tool", param: "tools[0]",
            message: "The built-in tool 'web_search' is not available on this server; it was left out of the model's tools."}]);
        expect(response.tools).toEqual([webSearch, clock]);
        expect(logLines.filter((line) => line.includes(" WARN ") && line.includes("Built-in tools left out") && line.includes("tools=\"tools[0]\""))).toHaveLength(1);
        // Only built-in tools: the model gets none, and answers.
        expect((await client.responses.create({model: "fake-tools", input: "hi", tools: [webSearch, {type: "file_search", vector_store_ids: ["vs_1"]}], tool_choice: "auto"})).output_text).toBe("Done.");
        expect((await jobsOf("fake-tools")).at(-1)!.tools).toBeNull();
        for (const [tool_choice, param] of [[{type: "web_search_preview"}, "tool_choice.type"], ["required", "tool_choice"]] as const) {
            const error = await client.responses.create({model: "fake-tools", input: "hi", tools: [webSearch], tool_choice}).catch((caught) => caught);
            expect(error).toBeInstanceOf(OpenAI.BadRequestError);
            expect(error.param).toBe(param);
            expect(error.message).toContain("web_search");
        }
    });
});

describe("a response's output sent back as input", () => {
    it("include reasoning.encrypted_content: the reasoning item carries it, and it restores the reasoning when the item comes back without its text", async () => {
        const first = await client.responses.create({model: "thinker", input: "Plan something.", include: ["reasoning.encrypted_content"], store: false});
        const reasoning = first.output[0] as OpenAI.Responses.ResponseReasoningItem;
        expect(reasoning).toMatchObject({type: "reasoning", content: [{type: "reasoning_text", text: "Plan it."}]});
        expect(Buffer.from(reasoning.encrypted_content!, "base64").toString("utf8")).toContain("Plan it.");
        // Streamed: on the item's output_item.done.
        const stream = await client.responses.create({model: "thinker", input: "Plan something.", include: ["reasoning.encrypted_content"], stream: true});
        let doneItem: OpenAI.Responses.ResponseOutputItem | undefined;
        for await (const event of stream)
            if (event.type === "response.output_item.done" && event.item.type === "reasoning")
                doneItem = event.item;
        expect((doneItem as OpenAI.Responses.ResponseReasoningItem).encrypted_content).toBe(reasoning.encrypted_content);

        // Back without its text (as clients that keep only the opaque value send it): the engine gets the reasoning on the assistant's turn.
        await client.responses.create({model: "thinker", store: false, input: [
            {role: "user", content: "Plan something."},
            {type: "reasoning", id: reasoning.id, summary: [], encrypted_content: reasoning.encrypted_content},
            ...first.output.slice(1) as OpenAI.Responses.ResponseInputItem[],
            {role: "user", content: "Go on."}
        ]});
        expect((await jobsOf("thinker")).at(-1)!.turns).toEqual([
            {role: "user", content: "Plan something."},
            {role: "assistant", content: "Done.", reasoning: "Plan it."},
            {role: "user", content: "Go on."}
        ]);
        // Without include, no encrypted_content.
        expect((await client.responses.create({model: "thinker", input: "x"})).output[0]).not.toHaveProperty("encrypted_content");
    });

    it("every output item is accepted back as it came (reasoning_text content, summary, ids, statuses, logprobs), also through previous_response_id", async () => {
        const first = await client.responses.create({model: "thinker", input: "Plan something."});
        expect(first.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
        await client.responses.create({model: "thinker", input: [{role: "user", content: "Plan something."}, ...first.output as OpenAI.Responses.ResponseInputItem[], {role: "user", content: "Again."}]});
        const turns = (await jobsOf("thinker")).at(-1)!.turns;
        expect(turns[1]).toEqual({role: "assistant", content: "Done.", reasoning: "Plan it."});
        await client.responses.create({model: "thinker", previous_response_id: first.id, input: "Again."});
        expect((await jobsOf("thinker")).at(-1)!.turns).toEqual(turns);
    });
});

describe("errors name the field the client sent", () => {
    const badRequest = async (body: Record<string, unknown>) => {
        const error = await client.responses.create({model: "fake-tools", ...body} as never).catch((caught) => caught);
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        return error as InstanceType<typeof OpenAI.BadRequestError>;
    };

    it("deep in input, tools and text.format, never `input` or chat completions' names", async () => {
        const call = {type: "function_call", call_id: "c1", name: "get_weather", arguments: "{\"city\":"};
        expect((await badRequest({input: [{role: "user", content: "x"}, {type: "function_call", call_id: "c1", name: "w", arguments: "{}"}, {type: "function_call_output", call_id: "c1", output: "o"}, {type: "web_search_call"}]})).param).toBe("input[3].type");
        expect((await badRequest({input: [{role: "user", content: "x"}, call, {type: "function_call_output", call_id: "c1", output: "o"}], tools: [weather]})))
            .toMatchObject({param: "input[1].arguments", message: expect.stringContaining("'input[1].arguments'")});
        expect((await badRequest({input: [{role: "user", content: "x"}, {type: "function_call_output", call_id: "c7", output: "o"}]})).param).toBe("input[1].call_id");
        expect((await badRequest({input: [{role: "user", content: [{type: "input_text", text: "see"}, {type: "input_image", image_url: "data:image/png;base64,AA"}]}]})).param).toBe("input[0].content[1]");
        expect((await badRequest({input: [{role: "user", content: "x"}, {type: "custom_tool_call", call_id: "c1", name: "exec", input: "ls"}, {type: "custom_tool_call_output", call_id: "c1", output: [{type: "input_file", file_id: "f"}]}], tools: [exec]})).param)
            .toBe("input[2].output[0].type");
        const unenforceable = {type: "object", properties: {at: {type: "string", pattern: "^[0-9]+$"}}, required: ["at"]};
        const forced = await badRequest({input: "x", tools: [{type: "namespace", name: "clock", description: "", tools: [{type: "function", name: "set", parameters: unenforceable}]}], tool_choice: {type: "function", name: "set"}});
        expect(forced.param).toMatch(/^tools\[0\]\.tools\[0\]\.parameters/);
        expect(forced.message).not.toContain("function.parameters");
        expect((await badRequest({input: "x", tools: [{type: "namespace", name: "clock", description: "", tools: [{type: "function", name: "set", parameters: "no"}]}]})).param).toBe("tools[0].tools[0].parameters");
        expect((await badRequest({input: "x", tools: [clock], tool_choice: {type: "function", name: "nap"}})).param).toBe("tool_choice.name");
        expect((await badRequest({input: "no word for the format", text: {format: {type: "json_object"}}})).message).toContain("'input' must contain the word 'json'");
        expect((await badRequest({input: "x", text: {format: {type: "json_schema", name: "o", schema: {type: "object", properties: {a: {type: "string", pattern: "x+"}}}}}})).param).toMatch(/^text\.format\.schema/);
        expect((await badRequest({input: "x", reasoning: {effort: "huge"}})).param).toBe("reasoning.effort");
    });
});

describe("OpenAI's schema: output_text logprobs and cache_write_tokens", () => {
    it("logprobs are [] when not asked for, in the body and every event that carries the part; usage has cache_write_tokens 0", async () => {
        const response = await client.responses.create({model: "fake", input: "hi"});
        expect(response.output[0]).toMatchObject({type: "message", content: [{type: "output_text", text: "Hello world", annotations: [], logprobs: []}]});
        expect(response.usage!.input_tokens_details).toEqual({cached_tokens: 0, cache_write_tokens: 0});
        const stream = await client.responses.create({model: "fake", input: "hi", stream: true});
        const parts: unknown[] = [];
        for await (const event of stream) {
            if (event.type === "response.content_part.added" || event.type === "response.content_part.done")
                parts.push(event.part);
            if (event.type === "response.output_item.done" && event.item.type === "message")
                parts.push(event.item.content[0]);
            if (event.type === "response.output_text.delta" || event.type === "response.output_text.done")
                expect(event.logprobs).toEqual([]);
            if (event.type === "response.completed")
                expect(event.response.usage!.input_tokens_details.cache_write_tokens).toBe(0);
        }
        expect(parts).toEqual([
            {type: "output_text", text: "", annotations: [], logprobs: []},
            {type: "output_text", text: "Hello world", annotations: [], logprobs: []},
            {type: "output_text", text: "Hello world", annotations: [], logprobs: []}
        ]);
    });

    it("include message.output_text.logprobs: one entry per token of the text, the same streamed and not", async () => {
        const request: OpenAI.Responses.ResponseCreateParamsNonStreaming = {model: "stories", input: "Once upon a time", max_output_tokens: 12, temperature: 0, include: ["message.output_text.logprobs"], top_logprobs: 2};
        const response = await client.responses.create(request);
        const part = (response.output[0] as OpenAI.Responses.ResponseOutputMessage).content[0] as OpenAI.Responses.ResponseOutputText;
        expect(part.logprobs!.length).toBeGreaterThan(0);
        expect(part.logprobs!.map((entry) => entry.token).join("")).toBe(part.text);
        expect(part.logprobs!.every((entry) => entry.top_logprobs.length === 2 && entry.logprob <= 0)).toBe(true);
        const stream = await client.responses.create({...request, stream: true});
        const streamed: OpenAI.Responses.ResponseTextDeltaEvent.Logprob[] = [];
        for await (const event of stream)
            if (event.type === "response.output_text.delta")
                streamed.push(...event.logprobs);
        expect(streamed).toEqual(part.logprobs);
    });
});
