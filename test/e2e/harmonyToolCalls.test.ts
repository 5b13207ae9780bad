import { createOpenAI } from "@ai-sdk/openai";
import { generateText, stepCountIs, tool } from "ai";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { makeTestLlamaGguf, scriptThrough } from "../support/gguf/makeTestLlamaGguf.js";
import { realTemplatesDir } from "../support/realTemplateModels.js";
import { jsonOf, startTestServer, type TestServer } from "../support/startTestServer.js";
import { testModelsDir } from "../support/testModels.js";
import { callOf, weatherQuestion as messages, weatherTools as tools } from "../support/weatherTool.js";

// A model with gpt-oss's real template (harmony), scripted to think and then call a function as gpt-oss does: a message
// of its own addressed `to=functions.get_weather`, ended by `<|call|>` (an end of generation). Through the openai
// client: the call comes back as tool_calls, its analysis as reasoning, streamed and not; tool_choice required and a
// named function (the prompt opens the call message, a grammar writes the name and arguments); and the follow-up with
// the tool's result renders as the template renders it. Before, gpt-oss's template had no tool support here: requests
// with tools got a 400.

const modelPath = path.join(testModelsDir, "harmony-calls-gpt-oss.gguf");
const analysisHeader = "<|channel|>analysis<|message|>";
const callHeader = "<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>";
const argumentPieces = ['{"city":', '▁"Paris",', '▁"days":', '▁2}'];

describe("gpt-oss's tool calls (its real harmony template)", () => {
    let server: TestServer;
    beforeAll(async () => {
        fs.mkdirSync(testModelsDir, {recursive: true});
        // The script starts from the generation prompt's last token (`<|start|>assistant`).
        const script = scriptThrough(["▁assistant", analysisHeader, "▁Need", "▁weather.", callHeader, ...argumentPieces, "<|call|>"]);
        await makeTestLlamaGguf(modelPath, {
            seed: 91, chatTemplate: fs.readFileSync(path.join(realTemplatesDir, "openai-gpt-oss-120b.jinja"), "utf8"),
            // As llama.cpp loads gpt-oss: <|start|>, <|channel|>, <|message|>, <|constrain|> rendered as text; the ends control tokens.
            userDefinedVocab: ["<|start|>", "<|channel|>", "<|message|>", "<|constrain|>"],
            controlVocab: ["<|end|>", "<|return|>", "<|call|>", "<|endoftext|>"],
            extraVocab: [analysisHeader, callHeader, "▁Need", "▁weather.", ...argumentPieces], script
        });
        server = await startTestServer({models: [{id: "gpt-oss", task: "chat", path: modelPath, contextSize: 2048, parallel: 1}]});
    }, 60_000);
    afterAll(() => server?.stop());

    
    it("a call comes back as tool_calls, its analysis as reasoning", async () => {
        const completion = await server.client.chat.completions.create({model: "gpt-oss", temperature: 0, max_tokens: 64, tools, messages});
        const [choice] = completion.choices;
        expect(choice.finish_reason).toBe("tool_calls");
        expect(choice.message.content).toBeNull();
        expect((choice.message as {reasoning_content?: string}).reasoning_content).toBe("Need weather.");
        expect(choice.message.tool_calls!.map(callOf)).toEqual([["get_weather", {city: "Paris", days: 2}]]);
    });

    it("a tool without a description (the template writes `\"// \" + tool.description`): rendered with an empty one, as llama-server does", async () => {
        const bare = [{type: "function" as const, function: {name: "get_weather", parameters: tools[0].function.parameters}}];
        const completion = await server.client.chat.completions.create({model: "gpt-oss", temperature: 0, max_tokens: 64, tools: bare, messages});
        expect(completion.choices[0].message.tool_calls!.map(callOf)).toEqual([["get_weather", {city: "Paris", days: 2}]]);
    });

    it("streamed: the deltas fold into the same call", async () => {
        const stream = server.client.chat.completions.stream({model: "gpt-oss", temperature: 0, max_tokens: 64, tools, messages});
        const completion = await stream.finalChatCompletion();
        const [choice] = completion.choices;
        expect(choice.finish_reason).toBe("tool_calls");
        expect(choice.message.tool_calls!.map(callOf)).toEqual([["get_weather", {city: "Paris", days: 2}]]);
    });

    it("cut by max_tokens inside the arguments: no call, finish_reason length", async () => {
        const completion = await server.client.chat.completions.create({model: "gpt-oss", temperature: 0, max_tokens: 5, tools, messages});
        const [choice] = completion.choices;
        expect(choice.finish_reason).toBe("length");
        expect(choice.message.tool_calls ?? []).toEqual([]);
    });

    it.each([["required", "required" as const], ["a named function", {type: "function" as const, function: {name: "get_weather"}}]])(
        "tool_choice %s, thinking off: the prompt opens the call, the grammar holds the model to its name and arguments", async (_name, toolChoice) => {
            const completion = await server.client.chat.completions.create({model: "gpt-oss", temperature: 0, max_tokens: 64, tools, messages, tool_choice: toolChoice,
                reasoning_effort: "none" as "low"});
            const [choice] = completion.choices;
            expect(choice.finish_reason).toBe("tool_calls");
            // The grammar lets the scripted model write its own arguments (they match the schema).
            expect(choice.message.tool_calls!.map(callOf)).toEqual([["get_weather", {city: "Paris", days: 2}]]);
        });

    it("through the Responses API (what Codex speaks): a reasoning item, then a function_call item", async () => {
        const response = await server.client.responses.create({
            model: "gpt-oss", temperature: 0, max_output_tokens: 64, input: messages[0].content,
            tools: [{type: "function", name: "get_weather", description: "The weather in a city", parameters: tools[0].function.parameters, strict: false}]
        });
        expect(response.output.map((item) => item.type)).toEqual(["reasoning", "function_call"]);
        const call = response.output[1];
        expect(call.type === "function_call" ? [call.name, JSON.parse(call.arguments)] : null).toEqual(["get_weather", {city: "Paris", days: 2}]);
    });

    it("the AI SDK's default OpenAI provider runs a tool loop: its second step names the stored reasoning item by reference", async () => {
        // With `store` on (the SDK's default) step 2 sends `{"type": "item_reference", "id": "rs_..."}` for the reasoning
        // of step 1: it was a 400 ("input[1].type") before references were read from the stored responses.
        const sent: unknown[] = [];
        const openai = createOpenAI({baseURL: `${server.url}/v1`, apiKey: "unused", fetch: async (url, init) => {
            sent.push(JSON.parse(String(init?.body ?? "null")));
            return await fetch(url, init);
        }});
        const result = await generateText({
            model: openai.responses("gpt-oss"), prompt: messages[0].content, maxOutputTokens: 64, temperature: 0, stopWhen: stepCountIs(2),
            tools: {get_weather: tool({description: "The weather in a city", inputSchema: z.object({city: z.string(), days: z.number().optional()}),
                execute: async () => "Sunny, 24 C"})}
        });
        expect(result.steps).toHaveLength(2);
        expect(result.steps[0].toolCalls.map((call) => [call.toolName, call.input])).toEqual([["get_weather", {city: "Paris", days: 2}]]);
        expect(result.steps[0].reasoningText).toBe("Need weather.");
        const second = sent[1] as {input: {type?: string, id?: string}[]};
        expect(second.input.filter((item) => item.type === "item_reference").map((item) => item.id)).toEqual([expect.stringMatching(/^rs_/)]);
        // The referenced reasoning reached the template as the call's analysis: the second prompt holds it.
        expect(result.steps[1].usage.inputTokens).toBeGreaterThan(result.steps[0].usage.inputTokens! + 10);
        // The same reference without its type (optional in OpenAI's ItemReference), on top of the first step's stored input.
        const first = sent[0] as {input: unknown[]};
        const bare = await server.post("/v1/responses", {model: "gpt-oss", max_output_tokens: 8, input: [...first.input, {id: second.input.find((item) => item.type === "item_reference")!.id}]});
        expect(bare.status).toBe(200);
        // A reference to nothing stored: a 400 naming it.
        const response = await server.post("/v1/responses", {model: "gpt-oss", input: [{type: "item_reference", id: "rs_nothing"}]});
        expect(response.status).toBe(400);
        expect((await jsonOf(response)).error).toMatchObject({param: "input[0].id", message: expect.stringContaining("rs_nothing") as unknown});
    });

    it("the follow-up with the result is served (the call and its result rendered by the template)", async () => {
        const first = await server.client.chat.completions.create({model: "gpt-oss", temperature: 0, max_tokens: 64, tools, messages});
        const call = first.choices[0].message.tool_calls![0];
        const followUp = await server.client.chat.completions.create({
            model: "gpt-oss", temperature: 0, max_tokens: 64, tools,
            messages: [...messages, first.choices[0].message, {role: "tool", tool_call_id: call.id, content: "Sunny, 24 \"C\"\nthen rain"}]
        });
        // The script calls again: what matters is that the conversation rendered and the prompt grew by the call and its result.
        expect(followUp.choices[0].finish_reason).toBe("tool_calls");
        expect(followUp.usage!.prompt_tokens).toBeGreaterThan(first.usage!.prompt_tokens + 10);
    });
});

// A forced call (tool_choice required or a named function) with thinking on: gpt-oss analyses first, as llama-server
// lets it, and where its analysis message ends (`<|end|>`, its own control token) the engine opens the call message;
// the grammar then writes the name and the arguments. Before, the prompt opened the call at once: no analysis at all.
describe("gpt-oss's forced call thinks first (its real harmony template)", () => {
    let server: TestServer;
    const thinkingPath = path.join(testModelsDir, "harmony-forced-thinks.gguf");
    beforeAll(async () => {
        fs.mkdirSync(testModelsDir, {recursive: true});
        // From the prompt's opened analysis (`...<|message|>`) the model thinks, then ends the message with `<|end|>`; after
        // the engine's `...to=functions.` it is scripted along the call's text (its arguments after a piece of their own
        // that starts with `<|message|>`, the prompt's last token being that already).
        const argumentsStart = '<|message|>{"city":';
        const script = scriptThrough(["<|message|>", "▁Check", "▁forecast.", "<|end|>"]);
        const callPath = scriptThrough([".", "get", "_", "w", "e", "a", "t", "h", "er", "▁", "<|constrain|>", "json", argumentsStart, ...argumentPieces.slice(1), "<|call|>"]);
        await makeTestLlamaGguf(thinkingPath, {
            seed: 92, chatTemplate: fs.readFileSync(path.join(realTemplatesDir, "openai-gpt-oss-120b.jinja"), "utf8"),
            userDefinedVocab: ["<|start|>", "<|channel|>", "<|message|>", "<|constrain|>"],
            controlVocab: ["<|end|>", "<|return|>", "<|call|>", "<|endoftext|>"],
            extraVocab: ["▁Check", "▁forecast.", "get", "json", argumentsStart, ...argumentPieces.slice(1)], script: [...script, ...callPath]
        });
        server = await startTestServer({models: [{id: "gpt-oss", task: "chat", path: thinkingPath, contextSize: 2048, parallel: 1}]});
    }, 60_000);
    afterAll(() => server?.stop());

    it.each([["required", "required" as const], ["a named function", {type: "function" as const, function: {name: "get_weather"}}]])(
        "tool_choice %s: its analysis as reasoning, then the call", async (_name, toolChoice) => {
            const request = {model: "gpt-oss", temperature: 0, max_tokens: 96, tools, messages, tool_choice: toolChoice};
            const completion = await server.client.chat.completions.create(request);
            const [choice] = completion.choices;
            expect(choice.finish_reason).toBe("tool_calls");
            expect((choice.message as {reasoning_content?: string}).reasoning_content).toBe("Check forecast.");
            expect(choice.message.tool_calls!.map(callOf)).toEqual([["get_weather", {city: "Paris", days: 2}]]);
            // Streamed: the reasoning deltas, then the call's (the client's fold keeps only the last reasoning delta).
            let reasoning = "";
            const stream = server.client.chat.completions.stream(request);
            for await (const chunk of stream)
                reasoning += (chunk.choices[0]?.delta as {reasoning_content?: string} | undefined)?.reasoning_content ?? "";
            const streamed = await stream.finalChatCompletion();
            expect(reasoning).toBe("Check forecast.");
            expect(streamed.choices[0].finish_reason).toBe("tool_calls");
            expect(streamed.choices[0].message.tool_calls!.map(callOf)).toEqual([["get_weather", {city: "Paris", days: 2}]]);
        });

    it("max_tokens holds when the analysis ends just before it: the call's opening is written only as far as it allows (found by review)", async () => {
        for (const maxTokens of [3, 4, 6, 10]) {
            const completion = await server.client.chat.completions.create({model: "gpt-oss", temperature: 0, max_tokens: maxTokens, tools, messages, tool_choice: "required"});
            expect(completion.usage!.completion_tokens, `max_tokens ${maxTokens}`).toBeLessThanOrEqual(maxTokens);
            expect(completion.choices[0].finish_reason).toBe("length");
            expect(completion.choices[0].message.tool_calls ?? []).toEqual([]);
        }
    });

    it("a thinking budget ends the analysis there, the call opened all the same (Anthropic's Messages, tool_choice any)", async () => {
        const response = await server.post("/v1/messages", {
            model: "gpt-oss", max_tokens: 96, temperature: 0, messages, thinking: {type: "enabled", budget_tokens: 1}, tool_choice: {type: "any"},
            tools: [{name: "get_weather", description: "The weather in a city", input_schema: tools[0].function.parameters}]
        });
        expect(response.status).toBe(200);
        const body = await jsonOf(response) as {stop_reason: string, content: {type: string, thinking?: string, name?: string, input?: unknown}[]};
        expect(body.stop_reason).toBe("tool_use");
        // One token of analysis ("Check"), then the call: the budget's end opened the call message, not the final channel.
        expect(body.content.map((block) => block.type)).toEqual(["thinking", "tool_use"]);
        expect(body.content[0].thinking).toBe("Check");
        expect(body.content[1]).toMatchObject({name: "get_weather", input: {city: "Paris", days: 2}});
    });
});
