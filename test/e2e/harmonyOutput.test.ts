import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestLlamaGguf, scriptThrough } from "../support/gguf/makeTestLlamaGguf.js";
import { realTemplatesDir } from "../support/realTemplateModels.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { testModelsDir } from "../support/testModels.js";

const template = () => fs.readFileSync(path.join(realTemplatesDir, "openai-gpt-oss-120b.jinja"), "utf8");
const analysisHeader = "<|channel|>analysis<|message|>";
const preambleHeader = "<|end|><|start|>assistant<|channel|>commentary<|message|>";
const callHeader = "<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>";
const argumentPieces = ['{"city":', '▁"Paris"}'];
const tools = [{type: "function" as const, function: {name: "get_weather", description: "The weather in a city", parameters: {
    type: "object", properties: {city: {type: "string"}}, required: ["city"]}}}];
const messages = [{role: "user" as const, content: "Weather in Paris?"}];
const vocab = {userDefinedVocab: ["<|start|>", "<|channel|>", "<|message|>", "<|constrain|>"], controlVocab: ["<|end|>", "<|return|>", "<|call|>", "<|endoftext|>"]};

describe("gpt-oss: a preamble then a call, and answers with thinking off (its real template)", () => {
    let server: TestServer;
    const preamblePath = path.join(testModelsDir, "harmony-preamble.gguf");
    const htmlPath = path.join(testModelsDir, "harmony-html.gguf");
    beforeAll(async () => {
        fs.mkdirSync(testModelsDir, {recursive: true});
        await makeTestLlamaGguf(preamblePath, {
            seed: 91, chatTemplate: template(), ...vocab,
            extraVocab: [analysisHeader, preambleHeader, callHeader, "▁Need", "▁weather.", "▁Checking", "▁now.", ...argumentPieces],
            script: scriptThrough(["▁assistant", analysisHeader, "▁Need", "▁weather.", preambleHeader, "▁Checking", "▁now.", callHeader, ...argumentPieces, "<|call|>"])
        });
        // Thinking off: the prompt ends `<|channel|>final<|message|>`; the model answers in HTML.
        await makeTestLlamaGguf(htmlPath, {seed: 92, chatTemplate: template(), ...vocab, extraVocab: ["<b>", "Hi", "</b>"],
            script: [["<|message|>", "<b>"], ["<b>", "Hi"], ["Hi", "</b>"], ["</b>", "<|return|>"]]});
        server = await startTestServer({models: [
            {id: "gpt-oss", task: "chat", path: preamblePath, contextSize: 2048, parallel: 2},
            {id: "gpt-oss-none", task: "chat", path: preamblePath, contextSize: 2048, parallel: 1, reasoning: "none"},
            {id: "gpt-oss-html", task: "chat", path: htmlPath, contextSize: 2048, parallel: 1}
        ]});
    }, 60_000);
    afterAll(() => server?.stop());

    // openai's stream folding keeps only the last reasoning_content delta (Object.assign of unknown fields): not compared streamed.
    const summary = (choice: any, streamed = false) => ({finish: choice.finish_reason, content: choice.message.content, ...(streamed ? {} : {reasoning: choice.message.reasoning_content}),
        calls: (choice.message.tool_calls ?? []).map((c: any) => [c.function.name, JSON.parse(c.function.arguments)])});

    it("non-streamed: preamble is content, call parsed", async () => {
        const completion = await server.client.chat.completions.create({model: "gpt-oss", temperature: 0, max_tokens: 64, tools, messages});
        expect(summary(completion.choices[0])).toEqual({finish: "tool_calls", content: " Checking now.", reasoning: "Need weather.", calls: [["get_weather", {city: "Paris"}]]});
    });

    it("streamed (folded by openai's client) equals non-streamed", async () => {
        const completion = await server.client.chat.completions.create({model: "gpt-oss", temperature: 0, max_tokens: 64, tools, messages});
        const streamed = await server.client.chat.completions.stream({model: "gpt-oss", temperature: 0, max_tokens: 64, tools, messages}).finalChatCompletion();
        expect(summary(streamed.choices[0], true)).toEqual(summary(completion.choices[0], true));
    });

    it("logprobs with tools: streamed equals non-streamed, and cover the content", async () => {
        const body = {model: "gpt-oss", temperature: 0, max_tokens: 64, tools, messages, logprobs: true, top_logprobs: 1};
        const completion = await server.client.chat.completions.create(body);
        const streamed = await server.client.chat.completions.stream(body).finalChatCompletion();
        expect(summary(streamed.choices[0], true)).toEqual(summary(completion.choices[0], true));
        const tokens = (c: any) => (c.choices[0].logprobs?.content ?? []).map((e: any) => e.token);
        expect(tokens(streamed)).toEqual(tokens(completion));
        expect(tokens(completion).length).toBeGreaterThan(0);
    });

    it("n=2: both choices parse the call, streamed and not", async () => {
        const body = {model: "gpt-oss", temperature: 0, max_tokens: 64, tools, messages, n: 2};
        const completion = await server.client.chat.completions.create(body);
        const streamed = await server.client.chat.completions.stream(body).finalChatCompletion();
        expect(completion.choices.map((c) => summary(c))).toEqual([0, 1].map(() => summary(completion.choices[0])));
        expect(streamed.choices.map((c) => summary(c, true))).toEqual(completion.choices.map((c) => summary(c, true)));
    });

    it("tool_choice none: no harmony markup in the content", async () => {
        const completion = await server.client.chat.completions.create({model: "gpt-oss", temperature: 0, max_tokens: 64, tools, messages, tool_choice: "none"});
        expect(completion.choices[0].message.content).toBe(" Checking now.");
        const streamed = await server.client.chat.completions.stream({model: "gpt-oss", temperature: 0, max_tokens: 64, tools, messages, tool_choice: "none"}).finalChatCompletion();
        expect(streamed.choices[0].message.content).toBe(" Checking now.");
    });

    it("reasoning_effort none: an answer that starts with '<' is not lost", async () => {
        const completion = await server.client.chat.completions.create({model: "gpt-oss-html", temperature: 0, max_tokens: 16, messages, reasoning_effort: "none" as never});
        expect(completion.choices[0].message.content).toBe("<b>Hi</b>");
    });

    it("a manifest with reasoning none: harmony's calls cannot be read, so tools get a 400 naming the field", async () => {
        const response = await server.post("/v1/chat/completions", {model: "gpt-oss-none", max_tokens: 8, tools, messages, tool_choice: "required"});
        expect(response.status).toBe(400);
        expect((await response.json() as {error: {param: string}}).error.param).toBe("tools");
    });

    it("Anthropic messages API: a tool_use block", async () => {
        const res = await fetch(server.url + "/v1/messages", {method: "POST", headers: {"content-type": "application/json", "x-api-key": "x", "anthropic-version": "2023-06-01"},
            body: JSON.stringify({model: "gpt-oss", max_tokens: 64, temperature: 0, messages, tools: [{name: "get_weather", description: "w", input_schema: tools[0].function.parameters}]})});
        const json: any = await res.json();
        expect(json.content.map((b: any) => b.type === "tool_use" ? [b.type, b.name, b.input] : [b.type, b.text ?? b.thinking])).toEqual([
            ["thinking", "Need weather."], ["text", " Checking now."], ["tool_use", "get_weather", {city: "Paris"}]
        ]);
        expect(json.stop_reason).toBe("tool_use");
    });

    it("Responses API streamed equals non-streamed", async () => {
        const body = {model: "gpt-oss", temperature: 0, max_output_tokens: 64, input: messages[0].content,
            tools: [{type: "function" as const, name: "get_weather", description: "w", parameters: tools[0].function.parameters, strict: false}]};
        const response = await server.client.responses.create(body);
        const stream = server.client.responses.stream(body);
        const final = await stream.finalResponse();
        const items = (r: any) => r.output.map((item: any) => item.type === "function_call" ? [item.type, item.name, item.arguments] : item.type === "message" ? [item.type, item.content.map((c: any) => c.text)] : [item.type]);
        expect(items(final)).toEqual(items(response));
        expect(items(response)).toEqual([["reasoning"], ["message", [" Checking now."]], ["function_call", "get_weather", '{"city": "Paris"}']]);
    });
});
