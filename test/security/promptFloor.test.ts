import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonOf, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyToolsModelPath } from "../support/testModels.js";
import { holdOffThreadWork, type OffThreadWork } from "../../src/core/workers/offThreadGate.js";

// Issue 29's chat-family attacks (findings 1, 2, 4, 6, 10) through HTTP: what each gets, and that the server keeps
// answering meanwhile. "Live meanwhile" is an order, not a time: the heavy request's work is held at its gate on the
// way to its helper thread (offThreadGate) until a /health/live sent meanwhile has been answered.
let server: TestServer;
beforeAll(async () => {
    server = await startTestServer({models: [
        {id: "tools", task: "chat", path: tinyToolsModelPath, contextSize: 4096, parallel: 1},
        // A large context, so that long conversations pass the floor and are rendered (in the render thread).
        {id: "long", task: "chat", path: tinyToolsModelPath, contextSize: 65536, parallel: 1}
    ]});
});
afterAll(() => server.stop());

const emptyTurns = (count: number) => Array.from({length: count}, (_, index) => ({role: index % 2 === 0 ? "user" : "assistant", content: ""}));
const nineMegabytes = "The quick brown fox jumps over the lazy dog. ".repeat(9 * 1024 * 1024 / 45);
const hi = [{role: "user", content: "hi"}];

/**
 * The heavy request's answer, after showing that the server answered /health/live while that request's `work` was
 * held on its way off the main thread (an order, not a time: the work waits at its gate until /health/live answered).
 */
async function whileLive(work: OffThreadWork, heavy: () => Promise<Response>): Promise<Response> {
    const hold = holdOffThreadWork(work);
    try {
        const answered = heavy();
        await Promise.race([hold.arrived(), answered.then(() => {
            throw new Error(`The request was answered without its ${work} going off the main thread`);
        })]);
        expect((await fetch(`${server.url}/health/live`)).status).toBe(200);
        hold.release();
        return await answered;
    } finally {
        hold.release();
    }
}

describe("floods of messages and items", () => {
    it("250,000 empty messages are refused before they reach the main thread, on chat, count_tokens and Responses; the server stays live", async () => {
        for (const [route, body] of [
            ["/v1/chat/completions", {model: "tools", messages: emptyTurns(250_000), max_tokens: 1}],
            ["/v1/messages/count_tokens", {model: "tools", messages: emptyTurns(250_000)}],
            ["/v1/responses", {model: "tools", input: emptyTurns(250_000), max_output_tokens: 1}]
        ] as const) {
            const response = await whileLive("json-parse", () => server.post(route, body));
            expect(response.status).toBe(400);
            const {error} = await jsonOf(response);
            // The conversation's bound (10,000), checked in the parse thread, in the words of the route's validation.
            expect(error.message).toContain(`Invalid '${route === "/v1/responses" ? "input" : "messages"}': expected an array with maximum length 10000, but got an array with length 250000 instead.`);
        }
    });

    it("400,000 Responses reasoning items likewise", async () => {
        const input = [...Array.from({length: 400_000}, () => ({type: "reasoning"})), {role: "user", content: "hi"}];
        const response = await whileLive("json-parse", () => server.post("/v1/responses", {model: "tools", input, max_output_tokens: 1}));
        expect(response.status).toBe(400);
        expect((await jsonOf(response)).error).toMatchObject({param: "input", message: expect.stringContaining("maximum length 10000, but got an array with length 400001")});
    });

    it("more than 10,000 messages or items is a 400 naming the field, on every route", async () => {
        const chat = await jsonOf(await server.post("/v1/chat/completions", {model: "tools", messages: emptyTurns(10_001), max_tokens: 1}));
        expect(chat.error).toMatchObject({param: "messages"});
        expect(chat.error.message).toContain("maximum length 10000");
        const responses = await jsonOf(await server.post("/v1/responses", {model: "tools", input: Array.from({length: 10_001}, () => ({type: "reasoning"}))}));
        expect(responses.error).toMatchObject({param: "input"});
        expect(responses.error.message).toContain("maximum length 10000");
        const messages = await server.post("/v1/messages", {model: "tools", max_tokens: 1, messages: emptyTurns(10_001)});
        expect(messages.status).toBe(400);
        expect((await jsonOf(messages)).error.message).toMatch(/messages.*10000/);
        // Decisions' input and tokenize's messages too; 32,000 (a 1 MB body) refused where it is parsed, in the same words.
        const decisions = await jsonOf(await server.post("/v1/decisions", {model: "tools", input: emptyTurns(10_001), questions: [{question: "?", type: "boolean"}]}));
        expect(decisions.error).toMatchObject({param: "input"});
        expect(decisions.error.message).toContain("maximum length 10000");
        const tokenize = await jsonOf(await server.post("/v1/tokenize", {model: "tools", messages: emptyTurns(32_000)}));
        expect(tokenize.error).toMatchObject({param: "messages",
            message: "Invalid 'messages': expected an array with maximum length 10000, but got an array with length 32000 instead."});
    });

    it("10,000 empty messages are refused by the floor (each message's share of the template), before rendering", async () => {
        const response = await server.post("/v1/chat/completions", {model: "tools", messages: emptyTurns(10_000), max_tokens: 1});
        expect(response.status).toBe(400);
        const {error} = await jsonOf(response);
        expect(error).toMatchObject({code: "context_length_exceeded", param: "messages"});
        expect(error.message).toMatch(/resulted in at least 59988 tokens/);
    });

    it("a long conversation that passes the floor is rendered off the main thread: counted exactly, the server live meanwhile", async () => {
        const users = (count: number) => Array.from({length: count}, () => ({role: "user", content: "hi"}));
        const count = async (messages: unknown[]) => (await jsonOf(await server.post("/v1/chat/completions", {model: "long", messages, max_tokens: 1}))).usage.prompt_tokens as number;
        // Each user message adds the same tokens; 400 messages are too many for the main thread, 1 and 2 are not.
        const [one, two, many] = [await count(users(1)), await count(users(2)), await count(users(400))];
        expect(many).toBe(one + 399 * (two - one));
        // 10,000 messages: rendered and tokenized (an exact count, not "at least"), while /health/live answers.
        const response = await whileLive("prompt-render", () => server.post("/v1/chat/completions", {model: "long", messages: users(10_000), max_tokens: 1}));
        expect(response.status).toBe(400);
        expect((await jsonOf(response)).error.message).toContain(`resulted in ${one + 9_999 * (two - one)} tokens`);
    // A bound, not a measurement: the render thread runs below the main thread's priority, so other jobs on the machine slow it most.
    }, 90_000);
});

describe("tool text counts toward the floor", () => {
    const bigTool = {type: "function", function: {name: "lookup", description: nineMegabytes, parameters: {type: "object", properties: {}}}};
    const atLeast = /at least \d+ tokens/;

    it("9 MB tool descriptions and parameters on chat", async () => {
        for (const tool of [bigTool, {type: "function", function: {name: "lookup", parameters: {type: "object", properties: {q: {type: "string", description: nineMegabytes}}}}}]) {
            const response = await whileLive("json-parse", () => server.post("/v1/chat/completions", {model: "tools", messages: hi, tools: [tool], max_tokens: 1}));
            expect(response.status).toBe(400);
            expect((await jsonOf(response)).error.message).toMatch(atLeast);
        }
    });

    it("9 MB tool-call arguments on chat and Responses", async () => {
        const args = JSON.stringify({q: nineMegabytes});
        const chat = await server.post("/v1/chat/completions", {model: "tools", max_tokens: 1, messages: [
            ...hi, {role: "assistant", content: null, tool_calls: [{id: "call_1", type: "function", function: {name: "lookup", arguments: args}}]},
            {role: "tool", tool_call_id: "call_1", content: "done"}
        ]});
        expect(chat.status).toBe(400);
        expect((await jsonOf(chat)).error.message).toMatch(atLeast);
        const responses = await server.post("/v1/responses", {model: "tools", max_output_tokens: 1, input: [
            ...hi, {type: "function_call", call_id: "call_1", name: "lookup", arguments: args}, {type: "function_call_output", call_id: "call_1", output: "done"}
        ]});
        expect(responses.status).toBe(400);
        expect((await jsonOf(responses)).error.message).toMatch(atLeast);
    });

    it("large tool-call arguments are parsed off the main thread: not JSON, or too many values inside, is a 400 naming the field in the client's terms", async () => {
        const notJson = "{" + "x".repeat(100_000);
        const manyValues = JSON.stringify({q: Array.from({length: 150_000}, () => 0)});
        const chatWith = (args: string) => server.post("/v1/chat/completions", {model: "tools", max_tokens: 1, messages: [
            ...hi, {role: "assistant", content: null, tool_calls: [{id: "call_1", type: "function", function: {name: "lookup", arguments: args}}]},
            {role: "tool", tool_call_id: "call_1", content: "done"}
        ]});
        for (const [args, reason] of [[notJson, "not valid JSON"], [manyValues, "more than 100,000 JSON values"]]) {
            const response = await whileLive("json-parse", () => chatWith(args));
            expect(response.status).toBe(400);
            const {error} = await jsonOf(response);
            expect(error.param).toBe("messages[1].tool_calls[0].function.arguments");
            expect(error.message).toContain(reason);
        }
        const responses = await server.post("/v1/responses", {model: "tools", max_output_tokens: 1, input: [
            ...hi, {type: "function_call", call_id: "call_1", name: "lookup", arguments: notJson}, {type: "function_call_output", call_id: "call_1", output: "done"}
        ]});
        expect(responses.status).toBe(400);
        expect((await jsonOf(responses)).error).toMatchObject({param: "input[1].arguments", message: expect.stringContaining("not valid JSON")});
        // A large valid one is parsed (off the thread) and counted like any other: 70,000 characters fit a 65,536-token
        // context. Tokenized as a chat request renders it (/v1/tokenize takes the same path), not evaluated: evaluating
        // the 14,000 tokens took 9 s alone, three times that beside another file.
        const fits = await server.post("/v1/tokenize", {model: "long", messages: [
            ...hi, {role: "assistant", content: null, tool_calls: [{id: "call_1", type: "function", function: {name: "lookup", arguments: JSON.stringify({q: "word ".repeat(14_000)})}}]},
            {role: "tool", tool_call_id: "call_1", content: "done"}
        ]});
        expect(fits.status).toBe(200);
        expect((await jsonOf(fits)).tokens.length).toBeGreaterThan(14_000);
    });

    it("9 MB tool descriptions on Responses, Messages and count_tokens (which answered 200 with 1.5M tokens)", async () => {
        const responses = await server.post("/v1/responses", {model: "tools", max_output_tokens: 1, input: "hi", tools: [{type: "function", name: "lookup", description: nineMegabytes, parameters: {type: "object", properties: {}}}]});
        expect(responses.status).toBe(400);
        expect((await jsonOf(responses)).error.message).toMatch(atLeast);
        const anthropicTool = {name: "lookup", description: nineMegabytes, input_schema: {type: "object", properties: {}}};
        for (const route of ["/v1/messages", "/v1/messages/count_tokens"]) {
            const response = await server.post(route, {model: "tools", max_tokens: 1, messages: hi, tools: [anthropicTool]});
            expect(response.status).toBe(400);
            const body = await jsonOf(response);
            expect(body.type).toBe("error");
            expect(body.error.message).toMatch(/prompt is too long|at least \d+ tokens/);
        }
    });
});

describe("a long prompt refused from its size, before it is made a string on the main thread (earlyPromptFloor)", () => {
    it("on every chat route, in each API's words and fields", async () => {
        // The model loaded first: the check is made only for a loaded model.
        expect((await server.post("/v1/chat/completions", {model: "tools", messages: hi, max_tokens: 1})).status).toBe(200);
        const openAi = (param: string, wording: RegExp) => ({status: 400, error: {type: "invalid_request_error", code: "context_length_exceeded", param, message: expect.stringMatching(wording)}});
        const chatWords = /^This model's maximum context length is 4096 tokens\. However, your messages resulted in at least \d+ tokens\./;
        const responsesWords = /^This model's maximum context length is 4096 tokens\. However, your input resulted in at least \d+ tokens\. Please reduce the length of the input\./;
        const textPart = (type: string) => [{type, text: nineMegabytes}];
        for (const [route, body, expected] of [
            ["/v1/chat/completions", {model: "tools", max_tokens: 1, messages: [{role: "system", content: nineMegabytes}, ...hi]}, openAi("messages", chatWords)],
            ["/v1/chat/completions", {model: "tools", max_tokens: 1, stream: true, messages: [{role: "user", content: textPart("text")}]}, openAi("messages", chatWords)],
            ["/v1/completions", {model: "tools", max_tokens: 1, prompt: ["hi", nineMegabytes]},
                openAi("prompt[1]", /^This model's maximum context length is 4096 tokens, however your prompt is at least \d+ tokens\./)],
            ["/v1/responses", {model: "tools", max_output_tokens: 1, input: nineMegabytes}, openAi("input", responsesWords)],
            ["/v1/responses", {model: "tools", max_output_tokens: 1, instructions: nineMegabytes, input: "hi"}, openAi("input", responsesWords)],
            ["/v1/responses", {model: "tools", max_output_tokens: 1, input: [{role: "user", content: textPart("input_text")}]}, openAi("input", responsesWords)],
            ["/v1/messages", {model: "tools", max_tokens: 1, system: nineMegabytes, messages: hi},
                {status: 400, type: "error", error: {type: "invalid_request_error", message: expect.stringMatching(/^prompt is too long: at least \d+ tokens > 4096 maximum$/)}}],
            ["/v1/messages/count_tokens", {model: "tools", messages: [{role: "user", content: textPart("text")}]},
                {status: 400, type: "error", error: {type: "invalid_request_error", message: expect.stringMatching(/^prompt is too long: at least \d+ tokens > 4096 maximum$/)}}]
        ] as const) {
            const response = await server.post(route, body);
            expect({status: response.status, ...await jsonOf(response)}, route).toMatchObject(expected);
        }
        // Counted for the model, as any refusal of a request that names one.
        const metrics = await (await fetch(`${server.url}/metrics`)).text();
        expect(metrics).toMatch(/los_requests_total\{endpoint="\/v1\/completions",model="tools",status="400"\} [1-9]/);
    });

    it("a field the schema refuses is reported first; text a format drops is not counted", async () => {
        const invalid = await server.post("/v1/chat/completions", {model: "tools", max_tokens: 1, temperature: "hot", messages: [{role: "user", content: nineMegabytes}]});
        expect(invalid.status).toBe(400);
        expect((await jsonOf(invalid)).error.param).toBe("temperature");
        // Claude Code's billing header, a system block the Messages API leaves out of the prompt.
        const billing = {type: "text", text: "x-anthropic-billing-header: cc_version=1;" + nineMegabytes};
        for (const route of ["/v1/messages", "/v1/messages/count_tokens"]) {
            const response = await server.post(route, {model: "tools", max_tokens: 1, system: [billing, {type: "text", text: "Be brief."}], messages: hi});
            expect(response.status, route).toBe(200);
        }
    });
});

describe("chat_template_kwargs", () => {
    const kwargsError = async (kwargs: unknown) => {
        const response = await server.post("/v1/chat/completions", {model: "tools", messages: hi, max_tokens: 1, chat_template_kwargs: kwargs});
        expect(response.status).toBe(400);
        return (await jsonOf(response)).error;
    };

    it("a 300,000-element array and a 4.5M-element one are refused before they reach the main thread", async () => {
        for (const length of [300_000, 4_500_000])
            expect(await kwargsError({unread: Array(length).fill(0)})).toMatchObject({param: "chat_template_kwargs", code: "too_many_values"});
    });

    it("at most 64 KiB of JSON and 16 levels deep (a 9 MB string, 70,000 characters, 17 levels: each a 400 naming the field)", async () => {
        for (const kwargs of [{date_string: nineMegabytes}, {date_string: "x".repeat(70_000)}]) {
            const error = await kwargsError(kwargs);
            expect(error.param).toBe("chat_template_kwargs");
            expect(error.message).toContain("longer than 65,536 characters");
        }
        let deep: unknown = 1;
        for (let level = 0; level < 16; level++)
            deep = [deep];
        expect((await kwargsError({deep})).message).toContain("nested more than 16 levels deep");
        // Within the bounds: served.
        const ok = await server.post("/v1/chat/completions", {model: "tools", messages: hi, max_tokens: 1, chat_template_kwargs: {note: "x".repeat(60_000)}});
        expect(ok.status).toBe(200);
    });
});

describe("control-token text outside message content renders as plain text (by token count)", () => {
    const controls = "<|im_start|>".repeat(100);
    /** The prompt tokens of a chat request with `text` put where `place` puts it. */
    const promptTokens = async (place: (text: string) => Record<string, unknown>, text: string) => {
        const response = await server.post("/v1/chat/completions", {model: "tools", max_tokens: 1, messages: hi, ...place(text)});
        expect(response.status).toBe(200);
        return (await jsonOf(response)).usage.prompt_tokens as number;
    };
    let plainTokens: number;
    beforeAll(async () => {
        // The text as plain text: a raw prompt keeps control-token text as text (less its BOS).
        const completion = await server.post("/v1/completions", {model: "tools", prompt: controls, max_tokens: 1});
        plainTokens = (await jsonOf(completion)).usage.prompt_tokens - 1;
        expect(plainTokens).toBeGreaterThan(500);
    });

    const tool = (description: string, parameterDescription = "") => ({type: "function", function: {
        name: "lookup", description, parameters: {type: "object", properties: {q: {type: "string", description: parameterDescription}}}
    }});
    const call = (args: string, result: string) => ({messages: [
        ...hi, {role: "assistant", content: null, tool_calls: [{id: "call_1", type: "function", function: {name: "lookup", arguments: JSON.stringify({q: args})}}]},
        {role: "tool", tool_call_id: "call_1", content: result}
    ]});
    const places: [string, (text: string) => Record<string, unknown>][] = [
        ["a tool description", (text) => ({tools: [tool(text)]})],
        ["a tool's parameters", (text) => ({tools: [tool("", text)]})],
        ["tool-call arguments", (text) => call(text, "done")],
        ["a tool result", (text) => call("x", text)],
        ["chat_template_kwargs.tools", (text) => ({chat_template_kwargs: {tools: [tool(text)]}})]
    ];
    it.each(places)("in %s: 100 `<|im_start|>` add their plain-text tokens, not 100 control tokens", async (_, place) => {
        const added = await promptTokens(place, controls) - await promptTokens(place, "");
        // The same text as plain text, give or take its first and last token joining its neighbours.
        expect(Math.abs(added - plainTokens)).toBeLessThanOrEqual(2);
    });
});
