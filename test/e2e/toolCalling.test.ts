import type OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAjv } from "../../src/core/validation/createAjv.js";
import { jsonOf, readSse, startTestServer, type TestServer } from "../support/startTestServer.js";
import { testLlamaTokens } from "../support/gguf/makeTestLlamaGguf.js";
import { tinyChatModelPath, tinyToolsModelPath } from "../support/testModels.js";

// Tool calling on the tiny random-weight model with the Qwen2.5 template: forced calls are produced
// by the grammar; auto/none are steered with logit_bias (the model itself never decides to call).

const weatherParams = {
    type: "object",
    properties: {city: {type: "string", maxLength: 12}, unit: {enum: ["c", "f"]}},
    required: ["city", "unit"],
    additionalProperties: false
};
const timeParams = {type: "object", properties: {zone: {type: "string", maxLength: 8}}, required: ["zone"], additionalProperties: false};
const tools = [
    {type: "function" as const, function: {name: "get_weather", description: "Weather of a city", parameters: weatherParams}},
    {type: "function" as const, function: {name: "get_time", description: "Time in a zone", parameters: timeParams}}
];
const eos = String(testLlamaTokens.eos.id);

describe("tool calling", () => {
    let server: TestServer;
    const ajv = createAjv();
    const validators: Record<string, ReturnType<typeof ajv.compile>> = {get_weather: ajv.compile(weatherParams), get_time: ajv.compile(timeParams)};
    beforeAll(async () => {
        server = await startTestServer({
            models: [
                {id: "tiny-tools", task: "chat", path: tinyToolsModelPath, contextSize: 2048, parallel: 2},
                {id: "tiny-chat", task: "chat", path: tinyChatModelPath, contextSize: 512, parallel: 1}
            ]
        });
    });
    afterAll(() => server.stop());

    it("tool_choice naming a function forces calls (parallel by default) whose arguments validate against its parameters", async () => {
        let most = 0;
        for (let seed = 0; seed < 6; seed++) {
            const completion = await server.client.chat.completions.create({
                model: "tiny-tools", seed, temperature: 1, max_tokens: 1000, tools,
                tool_choice: {type: "function", function: {name: "get_weather"}},
                messages: [{role: "user", content: "What is the weather in Paris?"}]
            });
            const [choice] = completion.choices;
            expect(choice.finish_reason).toBe("tool_calls");
            expect(choice.message.content).toBeNull();
            const calls = choice.message.tool_calls!;
            expect(calls.length).toBeGreaterThanOrEqual(1);
            for (const call of calls) {
                expect(call.id).toMatch(/^call_[A-Za-z0-9_-]{16}$/);
                expect(call.type).toBe("function");
                if (call.type !== "function") continue;
                expect(call.function.name).toBe("get_weather");
                const args = JSON.parse(call.function.arguments);
                expect(validators.get_weather(args), JSON.stringify(validators.get_weather.errors)).toBe(true);
            }
            expect(new Set(calls.map((call) => call.id)).size).toBe(calls.length);
            most = Math.max(most, calls.length);
        }
        // After a call the grammar allows end-of-generation or another call.
        expect(most).toBeGreaterThanOrEqual(2);
    }, 120_000);

    it("tool_choice required with parallel_tool_calls false makes exactly one call of one of the tools", async () => {
        const names = new Set<string>();
        for (let seed = 0; seed < 6; seed++) {
            const completion = await server.client.chat.completions.create({
                model: "tiny-tools", seed, temperature: 1, max_tokens: 200, tools, tool_choice: "required", parallel_tool_calls: false,
                messages: [{role: "user", content: "Weather or time?"}]
            });
            const [choice] = completion.choices;
            expect(choice.finish_reason).toBe("tool_calls");
            expect(choice.message.tool_calls).toHaveLength(1);
            const call = choice.message.tool_calls![0];
            if (call.type !== "function") throw new Error("not a function call");
            names.add(call.function.name);
            expect(validators[call.function.name](JSON.parse(call.function.arguments))).toBe(true);
        }
        expect([...names].every((name) => name === "get_weather" || name === "get_time")).toBe(true);
    }, 60_000);

    it("auto without a call and none answer with text and finish_reason stop/length", async () => {
        const auto = await server.client.chat.completions.create({
            model: "tiny-tools", tools, tool_choice: "auto", max_tokens: 20, logit_bias: {[eos]: 100},
            messages: [{role: "user", content: "hi"}]
        });
        expect(auto.choices[0].finish_reason).toBe("stop");
        expect(auto.choices[0].message.content).toBe("");
        expect(auto.choices[0].message.tool_calls).toBeUndefined();
        const none = await server.client.chat.completions.create({
            model: "tiny-tools", tools, tool_choice: "none", max_tokens: 8, seed: 1,
            messages: [{role: "user", content: "hi"}]
        });
        expect(none.choices[0].finish_reason).toBe("length");
        expect(typeof none.choices[0].message.content).toBe("string");
        expect(none.choices[0].message.tool_calls).toBeUndefined();
        // The tools are in the prompt: it is longer than without them.
        const plain = await server.client.chat.completions.create({model: "tiny-tools", max_tokens: 1, messages: [{role: "user", content: "hi"}]});
        expect(none.usage!.prompt_tokens).toBeGreaterThan(plain.usage!.prompt_tokens + 50);
    });

    it("a follow-up turn with the call and its tool message renders and answers", async () => {
        const first = await server.client.chat.completions.create({
            model: "tiny-tools", seed: 2, max_tokens: 200, tools, tool_choice: {type: "function", function: {name: "get_time"}},
            messages: [{role: "user", content: "What time is it?"}]
        });
        const message = first.choices[0].message;
        // Every call answered (a sampled choice may make parallel calls).
        const answers = message.tool_calls!.map((call) => ({role: "tool" as const, tool_call_id: call.id, content: "12:00"}));
        expect(answers.length).toBeGreaterThan(0);
        const second = await server.client.chat.completions.create({
            model: "tiny-tools", seed: 2, max_tokens: 6, tools, tool_choice: "none",
            messages: [{role: "user", content: "What time is it?"}, message, ...answers]
        });
        expect(second.choices[0].finish_reason).toBe("length");
        expect(second.usage!.prompt_tokens).toBeGreaterThan(first.usage!.prompt_tokens);
    });

    it("refuses what it cannot do with clear 400s", async () => {
        const cases: [object, string, RegExp][] = [
            [{tools, tool_choice: {type: "function", function: {name: "nope"}}}, "tool_choice", /no function named 'nope'/],
            [{tools: [{type: "custom", custom: {name: "x"}}]}, "tools[0].type", /only tools of type 'function'/],
            [{tools: [{type: "function", function: {name: "f", parameters: {type: "object", properties: {a: {type: "integer", minimum: 1}}}}}], tool_choice: "required"},
                "tools[0].function.parameters.properties.a.minimum", /minimum/],
            [{messages: [{role: "user", content: "Q"}, {role: "tool", tool_call_id: "call_x", content: "42"}]}, "messages[1].tool_call_id", /must answer a tool call/],
            [{messages: [{role: "user", content: "Q"}, {role: "assistant", content: null, tool_calls: [{id: "a", type: "function", function: {name: "f", arguments: "{}"}}]}]},
                "messages[1].tool_calls", /responding to each 'tool_call_id'/]
        ];
        for (const [extra, param, message] of cases) {
            const response = await server.post("/v1/chat/completions", {model: "tiny-tools", max_tokens: 3, messages: [{role: "user", content: "Q"}], ...extra});
            expect(response.status, param).toBe(400);
            const body = await jsonOf(response);
            expect(body.error.param).toBe(param);
            expect(body.error.message).toMatch(message);
        }
        const response = await server.post("/v1/chat/completions", {model: "tiny-chat", max_tokens: 3, tools, messages: [{role: "user", content: "Q"}]});
        expect(response.status).toBe(400);
        const body = await jsonOf(response);
        expect(body.error.param).toBe("tools");
        expect(body.error.message).toContain("'tiny-chat'");
    });

    /** The non-streamed and the streamed (raw SSE) answer to the same request. */
    async function bothWays(body: Record<string, unknown>) {
        const whole = await jsonOf(await server.post("/v1/chat/completions", body));
        const response = await server.post("/v1/chat/completions", {...body, stream: true});
        expect(response.status).toBe(200);
        const {events} = await readSse(response);
        expect(events.at(-1)!.data).toBe("[DONE]");
        return {whole, chunks: events.slice(0, -1).map((event) => JSON.parse(event.data))};
    }

    it("streams forced calls as OpenAI does: id, type and name first, then argument fragments that add up", async () => {
        for (const parallel of [true, false]) {
            const {whole, chunks} = await bothWays({
                model: "tiny-tools", seed: 5, temperature: 1, max_tokens: 1000, tools, tool_choice: "required", parallel_tool_calls: parallel,
                messages: [{role: "user", content: "Weather or time?"}]
            });
            const expected = whole.choices[0].message.tool_calls as {id: string, function: {name: string, arguments: string}}[];
            expect(whole.choices[0].finish_reason).toBe("tool_calls");
            const streamed: {id: string, name: string, arguments: string, fragments: number}[] = [];
            for (const chunk of chunks.slice(1, -1)) {
                const delta = chunk.choices[0].delta;
                expect(delta.content).toBeUndefined();
                for (const call of delta.tool_calls) {
                    if (call.id != null) {
                        expect(call.index).toBe(streamed.length);
                        expect(call.type).toBe("function");
                        expect(call.id).toMatch(/^call_[A-Za-z0-9_-]{16}$/);
                        expect(call.function.arguments).toBe("");
                        streamed.push({id: call.id, name: call.function.name, arguments: "", fragments: 0});
                    } else {
                        expect(Object.keys(call).sort()).toEqual(["function", "index"]);
                        streamed[call.index].arguments += call.function.arguments;
                        streamed[call.index].fragments++;
                    }
                }
            }
            expect(chunks.at(-1).choices[0]).toEqual({index: 0, delta: {}, logprobs: null, finish_reason: "tool_calls"});
            expect(streamed.map(({name, arguments: args}) => ({name, arguments: args})))
                .toEqual(expected.map((call) => ({name: call.function.name, arguments: call.function.arguments})));
            expect(streamed.every((call) => call.fragments > 1)).toBe(true);
            if (!parallel) expect(streamed).toHaveLength(1);
        }
    }, 60_000);

    it("streams text before any call when tool_choice is auto, and text only with none", async () => {
        for (const tool_choice of ["auto", "none"]) {
            const {whole, chunks} = await bothWays({model: "tiny-tools", seed: 4, max_tokens: 12, tools, tool_choice, messages: [{role: "user", content: "hi"}]});
            const text = chunks.slice(1, -1).map((chunk) => chunk.choices[0].delta.content ?? "").join("");
            expect(text).toBe(whole.choices[0].message.content);
            expect(chunks.some((chunk) => chunk.choices[0]?.delta.tool_calls != null)).toBe(false);
        }
    });

    it("the stream folded by the SDK (finalChatCompletion) is the completion answered without a stream: forced and parallel calls, text, the deprecated function_call", async () => {
        const requests: Omit<OpenAI.ChatCompletionCreateParamsNonStreaming, "stream">[] = [
            {model: "tiny-tools", seed: 5, temperature: 1, max_tokens: 1000, tools, tool_choice: "required", messages: [{role: "user", content: "Weather or time?"}]},
            {model: "tiny-tools", seed: 2, temperature: 1, max_tokens: 400, tools, tool_choice: {type: "function", function: {name: "get_weather"}}, n: 2,
                messages: [{role: "user", content: "What is the weather in Paris?"}]},
            {model: "tiny-tools", seed: 4, max_tokens: 12, tools, tool_choice: "auto", messages: [{role: "user", content: "hi"}]},
            {model: "tiny-tools", seed: 6, temperature: 1, max_tokens: 400, functions: [{name: "get_weather", description: "Weather of a city", parameters: weatherParams}],
                function_call: {name: "get_weather"}, messages: [{role: "user", content: "What is the weather in Paris?"}]}
        ];
        // Each answer names its own calls and time; the second request finds its prompt cached; the SDK's fold adds
        // `parsed`, `parsed_arguments` and an empty `tool_calls` of its own.
        const same = ({id: _id, created: _created, usage, choices, ...rest}: OpenAI.ChatCompletion) => JSON.parse(JSON.stringify({
            ...rest, usage: {...usage, prompt_tokens_details: undefined},
            choices: choices.map(({message: {tool_calls: calls, ...message}, ...choice}) => ({
                ...choice, message: {...message, ...(calls != null && calls.length > 0 ? {tool_calls: calls.map((call) => ({...call, id: "call"}))} : {})}
            }))
        }, (key, value) => key === "parsed" || key === "parsed_arguments" ? undefined : value));
        for (const request of requests) {
            const plain = await server.client.chat.completions.create(request);
            const folded = await server.client.chat.completions.stream({...request, stream_options: {include_usage: true}}).finalChatCompletion();
            expect(same(folded)).toEqual(same(plain));
        }
    }, 120_000);

    it("works with the official client's runTools helper, streamed and not", async () => {
        for (const stream of [false, true]) {
            const received: unknown[] = [];
            const runner = server.client.chat.completions.runTools({
                model: "tiny-tools", seed: 3, max_tokens: 400, stream, parallel_tool_calls: false,
                messages: [{role: "user", content: "What is the weather in Paris?"}],
                tool_choice: {type: "function", function: {name: "get_weather"}},
                tools: [{
                    type: "function",
                    function: {
                        name: "get_weather", description: "Weather of a city", parameters: weatherParams,
                        parse: JSON.parse, function: (args: unknown) => {
                            received.push(args);
                            return {sky: "sunny"};
                        }
                    }
                }]
            } as never) as unknown as {finalFunctionToolCall(): Promise<{name: string, arguments: string} | undefined>, finalFunctionToolCallResult(): Promise<unknown>};
            const call = await runner.finalFunctionToolCall();
            expect(call?.name).toBe("get_weather");
            expect(received).toHaveLength(1);
            expect(validators.get_weather(received[0])).toBe(true);
            expect(JSON.parse(call!.arguments)).toEqual(received[0]);
        }
    }, 60_000);

    it("maps the deprecated functions / function_call onto the same machinery, in their response shape", async () => {
        const body = {
            model: "tiny-tools", seed: 6, temperature: 1, max_tokens: 400,
            functions: [{name: "get_weather", description: "Weather of a city", parameters: weatherParams}],
            function_call: {name: "get_weather"},
            messages: [{role: "user", content: "What is the weather in Paris?"}]
        };
        const {whole, chunks} = await bothWays(body);
        const [choice] = whole.choices;
        expect(choice.finish_reason).toBe("function_call");
        expect(choice.message.tool_calls).toBeUndefined();
        expect(choice.message.content).toBeNull();
        expect(choice.message.function_call.name).toBe("get_weather");
        expect(validators.get_weather(JSON.parse(choice.message.function_call.arguments))).toBe(true);

        const deltas = chunks.slice(1, -1).map((chunk) => chunk.choices[0].delta);
        expect(deltas[0]).toEqual({function_call: {name: "get_weather", arguments: ""}});
        expect(deltas.map((delta) => delta.function_call.arguments).join("")).toBe(choice.message.function_call.arguments);
        expect(chunks.at(-1).choices[0].finish_reason).toBe("function_call");

        // The follow-up turn: the assistant's function_call and the function message with its result.
        const followUp = await server.client.chat.completions.create({
            model: "tiny-tools", seed: 6, max_tokens: 5, functions: body.functions,
            messages: [...body.messages, choice.message, {role: "function", name: "get_weather", content: "sunny"}]
        } as never) as unknown as {choices: {finish_reason: string}[]};
        expect(followUp.choices[0].finish_reason).toBe("length");

        const bad = await server.post("/v1/chat/completions", {...body, function_call: {name: "nope"}});
        expect(bad.status).toBe(400);
        expect((await jsonOf(bad)).error.param).toBe("function_call");
        const both = await server.post("/v1/chat/completions", {...body, tools});
        expect(both.status).toBe(400);
        expect((await jsonOf(both)).error.param).toBe("functions");
    }, 60_000);
});
