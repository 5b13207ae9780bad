import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonOf, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath } from "../support/testModels.js";

const base = {model: "tiny-chat", messages: [{role: "user", content: "hi"}], max_tokens: 2};

/** [description, request fields overriding `base`, expected param, expected code (optional)] */
const badRequests: [string, Record<string, unknown>, string | null, string?][] = [
    ["missing model", {model: undefined}, "model"],
    ["model not a string", {model: 5}, "model"],
    ["missing messages", {messages: undefined}, "messages"],
    ["empty messages", {messages: []}, "messages"],
    ["message without role", {messages: [{content: "x"}]}, "messages[0].role"],
    ["unknown role", {messages: [{role: "robot", content: "x"}]}, "messages[0].role"],
    ["content not string or array", {messages: [{role: "user", content: 5}]}, "messages[0].content"],
    ["user content null", {messages: [{role: "user", content: null}]}, "messages[0].content"],
    ["text part without text", {messages: [{role: "user", content: [{type: "text"}]}]}, "messages[0].content[0].text"],
    ["unknown part type", {messages: [{role: "user", content: [{type: "video", video: 1}]}]}, "messages[0].content[0].type"],
    ["temperature above 2", {temperature: 2.01}, "temperature"],
    ["temperature below 0", {temperature: -0.01}, "temperature"],
    ["temperature a string", {temperature: "hot"}, "temperature"],
    ["top_p above 1", {top_p: 1.01}, "top_p"],
    ["top_p below 0", {top_p: -0.1}, "top_p"],
    ["frequency_penalty above 2", {frequency_penalty: 2.01}, "frequency_penalty"],
    ["frequency_penalty below -2", {frequency_penalty: -2.01}, "frequency_penalty"],
    ["presence_penalty above 2", {presence_penalty: 2.5}, "presence_penalty"],
    ["presence_penalty below -2", {presence_penalty: -2.5}, "presence_penalty"],
    ["n = 21", {n: 21}, "n"],
    ["n = 0", {n: 0}, "n"],
    ["n fractional", {n: 1.5}, "n"],
    ["max_tokens 0", {max_tokens: 0}, "max_tokens"],
    ["max_tokens fractional", {max_tokens: 2.5}, "max_tokens"],
    ["max_completion_tokens 0", {max_completion_tokens: 0}, "max_completion_tokens"],
    ["max_tokens and max_completion_tokens disagree", {max_tokens: 3, max_completion_tokens: 4}, "max_completion_tokens"],
    ["five stop sequences", {stop: ["a", "b", "c", "d", "e"]}, "stop"],
    ["empty stop string", {stop: ""}, "stop"],
    ["stop with a number", {stop: ["a", 1]}, "stop[1]"],
    ["a stop sequence longer than 4,096 characters", {stop: "x".repeat(4097)}, "stop"],
    ["a stop sequence in a list longer than 4,096 characters", {stop: ["a", "x".repeat(4097)]}, "stop[1]"],
    ["logit_bias above 100", {logit_bias: {"5": 101}}, "logit_bias.5"],
    ["logit_bias below -100", {logit_bias: {"5": -101}}, "logit_bias.5"],
    ["logit_bias key not a token id", {logit_bias: {"abc": 1}}, "logit_bias.abc"],
    ["logit_bias key outside the vocabulary", {logit_bias: {"1019": 1}}, "logit_bias.1019"],
    ["seed fractional", {seed: 1.5}, "seed"],
    ["seed a string", {seed: "42"}, "seed"],
    ["stream not boolean", {stream: "yes"}, "stream"],
    ["stream_options without stream", {stream_options: {include_usage: true}}, "stream_options"],
    ["include_usage not boolean", {stream: true, stream_options: {include_usage: "yes"}}, "stream_options.include_usage"],
    ["response_format unknown type", {response_format: {type: "yaml"}}, "response_format.type"],
    ["json mode without the word json", {response_format: {type: "json_object"}}, "messages"],
    ["user not a string", {user: 5}, "user"],
    ["top_logprobs without logprobs", {top_logprobs: 2}, "top_logprobs"],
    ["top_logprobs with logprobs false", {logprobs: false, top_logprobs: 0}, "top_logprobs"],
    ["top_logprobs above 5", {logprobs: true, top_logprobs: 6}, "top_logprobs"],
    ["top_logprobs negative", {logprobs: true, top_logprobs: -1}, "top_logprobs"],
    ["logprobs not boolean", {logprobs: 1}, "logprobs"],
    ["tools (the ChatML model has no tool support)", {tools: [{type: "function", function: {name: "f"}}]}, "tools", "unsupported_parameter"],
    ["tool_choice (the ChatML model has no tool support)", {tool_choice: "required"}, "tool_choice", "unsupported_parameter"],
    ["functions (the ChatML model has no tool support)", {functions: [{name: "f"}]}, "functions", "unsupported_parameter"],
    ["function_call (the ChatML model has no tool support)", {function_call: {name: "f"}}, "function_call", "unsupported_parameter"],
    ["json_schema without json_schema", {response_format: {type: "json_schema"}}, "response_format.json_schema"],
    ["json_schema with a bad name", {response_format: {type: "json_schema", json_schema: {name: "a b"}}}, "response_format.json_schema.name"],
    ["json_schema with an unenforceable keyword", {response_format: {type: "json_schema", json_schema: {name: "x", schema: {type: "string", pattern: "a+"}}}}, "response_format.json_schema.schema.pattern", "unsupported_json_schema"],
    ["tool message (the ChatML model has no tool support)", {messages: [{role: "tool", content: "x", tool_call_id: "a"}]}, "messages[0].role", "unsupported_parameter"]
];

describe("chat request validation", () => {
    let server: TestServer;
    beforeAll(async () => {
        server = await startTestServer({models: [
            {id: "tiny-chat", task: "chat", path: tinyChatModelPath, contextSize: 128, parallel: 2},
            {id: "tiny-single", task: "chat", path: tinyChatModelPath, contextSize: 128, parallel: 1}
        ]});
    });
    afterAll(() => server.stop());

    it("n larger than the model's parallel sequences is a 400 naming n", async () => {
        for (const [model, n, limit] of [["tiny-single", 2, "1 parallel sequence"], ["tiny-chat", 3, "2 parallel sequences"]] as const) {
            const response = await server.post("/v1/chat/completions", {...base, model, n});
            expect(response.status).toBe(400);
            const body = await jsonOf(response);
            expect(body.error.param).toBe("n");
            expect(body.error.message).toContain(limit);
        }
    });

    it.each(badRequests)("%s is a 400 naming the field", async (_name, fields, param, code) => {
        const response = await server.post("/v1/chat/completions", {...base, ...fields});
        expect(response.status).toBe(400);
        const body = await jsonOf(response);
        expect(Object.keys(body)).toEqual(["error"]);
        expect(body.error.type).toBe("invalid_request_error");
        expect(body.error.param).toBe(param);
        expect(typeof body.error.message).toBe("string");
        expect(body.error.message.length).toBeGreaterThan(10);
        if (code != null)
            expect(body.error.code).toBe(code);
    });

    it.each([
        ["temperature 0 and 2", {temperature: 2}],
        ["top_p 0 and 1", {top_p: 0}],
        ["penalties at -2 and 2", {frequency_penalty: -2, presence_penalty: 2}],
        ["n = 2", {n: 2}],
        ["four stop sequences", {stop: ["a", "b", "c", "d"]}],
        ["logit_bias at the bounds", {logit_bias: {"10": 100, "11": -100}}],
        ["nulls for every optional field", {temperature: null, top_p: null, n: null, stop: null, seed: null, max_tokens: null, logit_bias: null, user: null, response_format: null, stream: null, tools: null, tool_choice: null, logprobs: null, top_logprobs: null}],
        ["tool_choice none, empty tools, logprobs false", {tool_choice: "none", tools: [], logprobs: false}],
        ["negative and 64-bit-ish seeds", {seed: -123456789012}]
    ])("accepts %s", async (_name, fields) => {
        const response = await server.post("/v1/chat/completions", {...base, ...fields});
        expect(response.status, await response.clone().text()).toBe(200);
    });

    it("unknown model is a 404 model_not_found", async () => {
        const response = await server.post("/v1/chat/completions", {...base, model: "gpt-5"});
        expect(response.status).toBe(404);
        expect((await jsonOf(response)).error).toEqual({
            message: "The model 'gpt-5' does not exist or you do not have access to it. Models served here: tiny-chat, tiny-single.",
            type: "invalid_request_error", param: "model", code: "model_not_found"
        });
        // A typo is pointed at the nearest served name.
        const typo = await server.post("/v1/chat/completions", {...base, model: "tiny-chta"});
        expect((await jsonOf(typo)).error.message).toContain("Did you mean 'tiny-chat'?");
    });

    it("malformed JSON is a 400, never a 500", async () => {
        for (const body of ["{", "{\"model\": }", "nul", "[1,2", "\"just a string\"", "42"]) {
            const response = await server.post("/v1/chat/completions", body);
            expect(response.status, body).toBe(400);
            expect((await jsonOf(response)).error.type).toBe("invalid_request_error");
        }
    });

    it("a JSON array or an empty body is a 400", async () => {
        expect((await server.post("/v1/chat/completions", "[]")).status).toBe(400);
        expect((await server.post("/v1/chat/completions", "")).status).toBe(400);
    });

    it("a non-JSON content type is a 415", async () => {
        const response = await server.post("/v1/chat/completions", "model=x", {headers: {"Content-Type": "application/x-www-form-urlencoded"}});
        expect(response.status).toBe(415);
        const body = await jsonOf(response);
        expect(body.error.code).toBe("unsupported_media_type");
        const plain = await fetch(`${server.url}/v1/chat/completions`, {method: "POST", body: JSON.stringify(base)});
        expect(plain.status).toBe(415);
    });

    it("an unknown path is a 404 and a wrong method a 405, both in OpenAI's shape", async () => {
        const missing = await fetch(`${server.url}/v1/nothing-here`);
        expect(missing.status).toBe(404);
        expect((await jsonOf(missing)).error.type).toBe("invalid_request_error");
        const wrongMethod = await fetch(`${server.url}/v1/chat/completions`);
        expect(wrongMethod.status).toBe(405);
        expect((await jsonOf(wrongMethod)).error.code).toBe("method_not_allowed");
    });

    it("the official client surfaces the error as BadRequestError with the param", async () => {
        const error = await server.client.chat.completions.create({...base, temperature: 3} as never).catch((caught) => caught);
        expect(error.constructor.name).toBe("BadRequestError");
        expect(error.status).toBe(400);
        expect(error.param).toBe("temperature");
    });
});

describe("body limit", () => {
    let server: TestServer;
    beforeAll(async () => {
        server = await startTestServer({
            models: [{id: "tiny-chat", task: "chat", path: tinyChatModelPath, contextSize: 128, parallel: 1}],
            config: {bodyLimit: "2kb"}
        });
    });
    afterAll(() => server.stop());

    it("a body over the configured limit is a 413", async () => {
        const response = await server.post("/v1/chat/completions", {...base, messages: [{role: "user", content: "x".repeat(4000)}]});
        expect(response.status).toBe(413);
        const body = await jsonOf(response);
        expect(body.error.message).toContain("2kb");
    });
});
