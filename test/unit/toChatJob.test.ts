import { describe, expect, it } from "vitest";
import type { ChatCompletionRequest } from "../../src/capabilities/chat/ChatCompletionWire.js";
import { toChatJob } from "../../src/capabilities/chat/toChatJob.js";
import type { ChatEngineInfo } from "../../src/capabilities/chat/ChatEngine.js";
import { ApiError } from "../../src/core/http/ApiError.js";

const engine: ChatEngineInfo = {id: "tiny-chat", contextSize: 2048, vocabularySize: 1000, fingerprint: "fp_test"};

function request(extra: Partial<ChatCompletionRequest> = {}): ChatCompletionRequest {
    return {model: "tiny-chat", messages: [{role: "user", content: "Hi"}], ...extra};
}

/** The ApiError thrown by toChatJob (fails the test when nothing or something else is thrown). */
function errorOf(body: ChatCompletionRequest): ApiError {
    try {
        toChatJob(body, engine);
    } catch (error) {
        expect(error).toBeInstanceOf(ApiError);
        return error as ApiError;
    }
    throw new Error("toChatJob accepted the request");
}

describe("toChatJob defaults", () => {
    it("applies OpenAI's defaults to a minimal request", () => {
        const job = toChatJob(request(), engine);
        expect(job.turns).toEqual([{role: "user", content: "Hi"}]);
        expect(job.n).toBe(1);
        expect(job.maxTokens).toBeNull();
        expect(job.stop).toEqual([]);
        expect(job.jsonObject).toBe(false);
        expect(job.sampling).toMatchObject({temperature: 1, topP: 1, frequencyPenalty: 0, presencePenalty: 0});
        expect(job.sampling.logitBias.size).toBe(0);
    });

    it("treats explicit nulls like absent fields", () => {
        const job = toChatJob(request({
            temperature: null, top_p: null, n: null, max_tokens: null, max_completion_tokens: null, stop: null,
            frequency_penalty: null, presence_penalty: null, logit_bias: null, seed: null, response_format: null,
            logprobs: null, top_logprobs: null, tools: null, tool_choice: null, functions: null, function_call: null
        }), engine);
        expect(job.n).toBe(1);
        expect(job.maxTokens).toBeNull();
        expect(job.stop).toEqual([]);
        expect(job.sampling).toMatchObject({temperature: 1, topP: 1, frequencyPenalty: 0, presencePenalty: 0});
    });

    it("copies the sampling settings that were given, 0 included", () => {
        const job = toChatJob(request({temperature: 0, top_p: 0.5, frequency_penalty: -1.5, presence_penalty: 2, n: 2}), engine);
        expect(job.n).toBe(2);
        expect(job.sampling).toMatchObject({temperature: 0, topP: 0.5, frequencyPenalty: -1.5, presencePenalty: 2});
    });
});

describe("toChatJob token limit and stop", () => {
    it("reads max_tokens and its newer name max_completion_tokens", () => {
        expect(toChatJob(request({max_tokens: 7}), engine).maxTokens).toBe(7);
        expect(toChatJob(request({max_completion_tokens: 9}), engine).maxTokens).toBe(9);
        expect(toChatJob(request({max_tokens: 5, max_completion_tokens: 5}), engine).maxTokens).toBe(5);
    });

    it("rejects max_tokens and max_completion_tokens with different values", () => {
        const error = errorOf(request({max_tokens: 5, max_completion_tokens: 6}));
        expect(error.status).toBe(400);
        expect(error.param).toBe("max_completion_tokens");
    });

    it("turns a string stop into a one-element list and copies a list", () => {
        expect(toChatJob(request({stop: "END"}), engine).stop).toEqual(["END"]);
        const stops = ["a", "b"];
        const job = toChatJob(request({stop: stops}), engine);
        expect(job.stop).toEqual(["a", "b"]);
        expect(job.stop).not.toBe(stops);
    });

    it("allows stream_options only when streaming", () => {
        expect(errorOf(request({stream_options: {include_usage: true}})).param).toBe("stream_options");
        expect(errorOf(request({stream: false, stream_options: {include_usage: true}})).param).toBe("stream_options");
        expect(() => toChatJob(request({stream: true, stream_options: {include_usage: true}}), engine)).not.toThrow();
    });
});

describe("toChatJob messages", () => {
    it("maps developer to system and keeps the order of the messages", () => {
        const job = toChatJob(request({messages: [
            {role: "developer", content: "Be brief."},
            {role: "system", content: "Sys"},
            {role: "user", content: "Q"},
            {role: "assistant", content: "A"},
            {role: "user", content: "Q2"}
        ]}), engine);
        expect(job.turns).toEqual([
            {role: "system", content: "Be brief."},
            {role: "system", content: "Sys"},
            {role: "user", content: "Q"},
            {role: "assistant", content: "A"},
            {role: "user", content: "Q2"}
        ]);
    });

    it("joins text content parts without a separator", () => {
        const job = toChatJob(request({messages: [
            {role: "user", content: [{type: "text", text: "Hello, "}, {type: "text", text: "world"}]}
        ]}), engine);
        expect(job.turns).toEqual([{role: "user", content: "Hello, world"}]);
    });

    it("an assistant message without content becomes an empty turn", () => {
        const job = toChatJob(request({messages: [
            {role: "user", content: "Q"},
            {role: "assistant", content: null},
            {role: "assistant"}
        ]}), engine);
        expect(job.turns.slice(1)).toEqual([{role: "assistant", content: ""}, {role: "assistant", content: ""}]);
    });

    it("a user or system message without content is a missing parameter", () => {
        const error = errorOf(request({messages: [{role: "user", content: "Q"}, {role: "system", content: null}]}));
        expect(error.status).toBe(400);
        expect(error.param).toBe("messages[1].content");
        expect(error.message).toContain("messages[1].content");
    });

    it("an image part on a text-only model is refused naming the model, the part and that no served model sees", () => {
        const error = errorOf(request({messages: [
            {role: "user", content: [{type: "text", text: "What is this?"}, {type: "image_url", image_url: {url: "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="}}]}
        ]}));
        expect(error.status).toBe(400);
        expect(error.code).toBe("model_not_multimodal");
        expect(error.param).toBe("messages[0].content[1]");
        expect(error.message).toBe("The model 'tiny-chat' does not take images (it is a text-only model); no model this server serves takes images.");
    });

    it.each(["input_audio", "file"])("a '%s' part is refused as unsupported content", (type) => {
        const error = errorOf(request({messages: [{role: "user", content: [{type}]}]}));
        expect(error.code).toBe("unsupported_content_part");
        expect(error.param).toBe("messages[0].content[0].type");
    });

    it("an unknown part type is an invalid value, not a multimodal refusal", () => {
        const error = errorOf(request({messages: [{role: "user", content: [{type: "hologram"}]}]}));
        expect(error.code).toBeNull();
        expect(error.param).toBe("messages[0].content[0].type");
        expect(error.message).toContain("hologram");
    });
});

describe("toChatJob seed", () => {
    it("keeps a given seed, 0 and negative ones included", () => {
        expect(toChatJob(request({seed: 42}), engine).sampling.seed).toBe(42);
        expect(toChatJob(request({seed: 0}), engine).sampling.seed).toBe(0);
        expect(toChatJob(request({seed: -5}), engine).sampling.seed).toBe(-5);
    });

    it("gives unseeded requests random seeds in 0..2^48", () => {
        const seeds = Array.from({length: 20}, () => toChatJob(request(), engine).sampling.seed);
        for (const seed of seeds) {
            expect(Number.isInteger(seed)).toBe(true);
            expect(seed).toBeGreaterThanOrEqual(0);
            expect(seed).toBeLessThan(2 ** 48);
        }
        expect(new Set(seeds).size).toBe(seeds.length);
    });
});

describe("toChatJob logit_bias", () => {
    it("converts the map to token ids and drops zero values", () => {
        const job = toChatJob(request({logit_bias: {"0": 5, "17": -100, "999": 100, "42": 0}}), engine);
        expect([...job.sampling.logitBias].sort((a, b) => a[0] - b[0])).toEqual([[0, 5], [17, -100], [999, 100]]);
    });

    it("rejects a token id outside the vocabulary, naming the key", () => {
        const error = errorOf(request({logit_bias: {"5": 1, "1000": 2}}));
        expect(error.status).toBe(400);
        expect(error.type).toBe("invalid_request_error");
        expect(error.param).toBe("logit_bias.1000");
        expect(error.message).toContain("1000");
    });

    it("rejects an out-of-vocabulary id even with a zero bias", () => {
        expect(errorOf(request({logit_bias: {"123456": 0}})).param).toBe("logit_bias.123456");
    });
});

describe("toChatJob JSON mode", () => {
    const jsonMode = {response_format: {type: "json_object" as const}};

    it("requires the word json in some message", () => {
        const error = errorOf(request({...jsonMode, messages: [{role: "user", content: "Give me an object"}]}));
        expect(error.status).toBe(400);
        expect(error.param).toBe("messages");
        expect(error.message).toContain("json");
    });

    it("accepts the word in any case and in any message", () => {
        const job = toChatJob(request({...jsonMode, messages: [
            {role: "system", content: "Reply in Json."},
            {role: "user", content: "Hi"}
        ]}), engine);
        expect(job.jsonObject).toBe(true);
        expect(toChatJob(request({...jsonMode, messages: [{role: "user", content: [{type: "text", text: "JSON please"}]}]}), engine).jsonObject)
            .toBe(true);
    });

    it("a text response format does not need the word", () => {
        expect(toChatJob(request({response_format: {type: "text"}}), engine).jsonObject).toBe(false);
    });
});

describe("toChatJob json_schema", () => {
    const format = (schema: unknown) => ({response_format: {type: "json_schema", json_schema: {name: "answer", schema}}} as Partial<ChatCompletionRequest>);

    it("passes an enforceable schema on, anyOf read as oneOf and annotations dropped", () => {
        const job = toChatJob(request(format({
            type: "object", title: "Answer", description: "d",
            properties: {n: {type: "integer"}, v: {anyOf: [{type: "string"}, {type: "null"}]}},
            required: ["n"], additionalProperties: false
        })), engine);
        expect(job.jsonSchema).toEqual({
            type: "object",
            properties: {n: {type: "integer"}, v: {oneOf: [{type: "string"}, {type: "null"}]}},
            required: ["n"], additionalProperties: false
        });
    });

    it.each([
        ["pattern", {type: "object", properties: {s: {type: "string", pattern: "^a"}}}, "response_format.json_schema.schema.properties.s.pattern"],
        ["minimum", {type: "object", properties: {n: {type: "integer", minimum: 3}}}, "response_format.json_schema.schema.properties.n.minimum"],
        ["allOf", {allOf: [{type: "string"}]}, "response_format.json_schema.schema.allOf"],
        ["email format", {type: "string", format: "email"}, "response_format.json_schema.schema.format"],
        ["definitions ref", {$ref: "#/definitions/x"}, "response_format.json_schema.schema.$ref"],
        ["untyped property", {type: "object", properties: {x: {}}}, "response_format.json_schema.schema.properties.x"],
        ["nested in items", {type: "array", items: {type: "number", multipleOf: 2}}, "response_format.json_schema.schema.items.multipleOf"]
    ])("refuses %s with a 400 naming the construct", (_name, schema, param) => {
        const error = errorOf(request(format(schema)));
        expect(error.status).toBe(400);
        expect(error.code).toBe("unsupported_json_schema");
        expect(error.param).toBe(param);
        expect(error.message).toContain(param);
    });
});

describe("toChatJob unsupported parameters", () => {
    const cases: [string, Partial<ChatCompletionRequest>, string][] = [
        ["tools", {tools: [{type: "function", function: {name: "f"}}]}, "tools"],
        ["tool_choice auto", {tool_choice: "auto"}, "tool_choice"],
        ["tool_choice object", {tool_choice: {type: "function", function: {name: "f"}}}, "tool_choice"],
        ["functions", {functions: [{name: "f"}]}, "functions"],
        ["function_call auto", {function_call: "auto"}, "function_call"],
        ["tool message", {messages: [{role: "user", content: "Q"}, {role: "tool", content: "42"}]}, "messages[1].role"],
        ["function message", {messages: [{role: "function", content: "42"}]}, "messages[0].role"],
        ["assistant tool_calls", {messages: [{role: "user", content: "Q"}, {role: "assistant", content: null, tool_calls: []}]}, "messages[1].tool_calls"],
        ["assistant function_call", {messages: [{role: "user", content: "Q"}, {role: "assistant", content: null, function_call: {name: "f", arguments: "{}"}}]}, "messages[1].function_call"]
    ];

    it.each(cases)("%s is refused as unsupported_parameter", (_name, extra, param) => {
        const error = errorOf(request(extra));
        expect(error.status).toBe(400);
        expect(error.type).toBe("invalid_request_error");
        expect(error.code).toBe("unsupported_parameter");
        expect(error.param).toBe(param);
        // The model has no tool support (its template has none), and the message says so.
        expect(error.message).toMatch(/not supported .*'tiny-chat'/);
    });

    it("maps logprobs / top_logprobs to the job, and refuses top_logprobs without logprobs", () => {
        expect(toChatJob(request({}), engine).logprobs).toBeNull();
        expect(toChatJob(request({logprobs: false}), engine).logprobs).toBeNull();
        expect(toChatJob(request({logprobs: true}), engine).logprobs).toBe(0);
        expect(toChatJob(request({logprobs: true, top_logprobs: 5}), engine).logprobs).toBe(5);
        const error = errorOf(request({top_logprobs: 2}));
        expect(error.status).toBe(400);
        expect(error.param).toBe("top_logprobs");
        expect(error.message).toMatch(/requires 'logprobs' to be set to true/);
    });

    it("accepts the harmless forms of those fields", () => {
        expect(() => toChatJob(request({logprobs: false, tools: [], tool_choice: "none", functions: [], function_call: "none"}), engine))
            .not.toThrow();
    });
});

describe("toChatJob tools on a model with tool support", () => {
    const toolEngine: ChatEngineInfo = {...engine, toolCallFormat: {prefix: "<tool_call>\n{\"name\": \"", paramsPrefix: "\", \"arguments\": ", suffix: "}\n</tool_call>", betweenCalls: "\n"}};
    const tools = [{type: "function", function: {name: "f", description: "F", parameters: {type: "object", properties: {a: {type: "string"}}, required: ["a"]}}}];

    it("maps tools, tool_choice and the calls + results of earlier turns", () => {
        const job = toChatJob(request({
            tools, tool_choice: {type: "function", function: {name: "f"}}, parallel_tool_calls: false,
            messages: [
                {role: "user", content: "Q"},
                {role: "assistant", content: null, tool_calls: [{id: "call_1", type: "function", function: {name: "f", arguments: "{\"a\":\"x\"}"}}]},
                {role: "tool", tool_call_id: "call_1", content: "42"} as never
            ]
        }), toolEngine);
        expect(job.turns).toEqual([
            {role: "user", content: "Q"},
            {role: "assistant", content: "", toolCalls: [{name: "f", arguments: {a: "x"}, result: "42"}]}
        ]);
        expect(job.tools).toEqual({
            functions: [{name: "f", description: "F", parameters: tools[0].function.parameters}],
            choice: {type: "forced", functions: [{name: "f", schema: tools[0].function.parameters}], parallel: false}
        });
        expect(toChatJob(request({tools}), toolEngine).tools?.choice).toEqual({type: "auto"});
        expect(toChatJob(request({tools, tool_choice: "none"}), toolEngine).tools?.choice).toEqual({type: "none"});
    });

    it("refuses a tool_choice without tools, an unknown function, bad arguments JSON", () => {
        expect(() => toChatJob(request({tool_choice: "auto"}), toolEngine)).toThrow(/only allowed when 'tools' are specified/);
        expect(() => toChatJob(request({tools, tool_choice: {type: "function", function: {name: "g"}}}), toolEngine)).toThrow(/no function named 'g'/);
        expect(() => toChatJob(request({messages: [{role: "assistant", content: null, tool_calls: [{id: "c", type: "function", function: {name: "f", arguments: "{"}}]}]}), toolEngine))
            .toThrow(/not valid JSON/);
    });
});
