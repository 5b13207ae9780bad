import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestLlamaGguf, scriptThrough } from "../support/gguf/makeTestLlamaGguf.js";
import { realTemplatesDir } from "../support/realTemplateModels.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
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
        "tool_choice %s: the prompt opens the call, the grammar holds the model to its name and arguments", async (_name, toolChoice) => {
            const completion = await server.client.chat.completions.create({model: "gpt-oss", temperature: 0, max_tokens: 64, tools, messages, tool_choice: toolChoice});
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
