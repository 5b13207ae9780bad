import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestLlamaGguf, scriptThrough } from "../support/gguf/makeTestLlamaGguf.js";
import { realTemplatesDir } from "../support/realTemplateModels.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { testModelsDir } from "../support/testModels.js";
import { callOf, weatherQuestion as messages, weatherTools as tools } from "../support/weatherTool.js";

// A model with NVIDIA-Nemotron-Nano-v2's real template, scripted to think and then call as the model does (llama.cpp's
// tests/test-chat.cpp): `<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}]</TOOLCALL>`, a JSON
// list between control tokens. Through the openai client: the call comes back as tool_calls, its thought as reasoning,
// streamed and not, and forced (the grammar writes the list). Before, node-llama-cpp's detected format ended the call at
// the first `}` (inside the arguments): the call came back as text.

const modelPath = path.join(testModelsDir, "json-list-calls.gguf");
const callPiece = '[{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}]';

describe("calls as a JSON list (NVIDIA-Nemotron-Nano-v2's real template)", () => {
    let server: TestServer;
    beforeAll(async () => {
        fs.mkdirSync(testModelsDir, {recursive: true});
        // The script starts from the generation prompt's last token (`<SPECIAL_11>Assistant\n<think>\n`).
        const script = scriptThrough(["\n", "▁I", "▁think", "</think>", "<TOOLCALL>", callPiece, "</TOOLCALL>", "<|im_end|>"]);
        await makeTestLlamaGguf(modelPath, {
            seed: 94, chatTemplate: fs.readFileSync(path.join(realTemplatesDir, "NVIDIA-Nemotron-Nano-v2.jinja"), "utf8"), contextLength: 4096,
            controlVocab: ["<SPECIAL_10>", "<SPECIAL_11>", "<SPECIAL_12>", "<TOOLCALL>", "</TOOLCALL>"], userDefinedVocab: ["<think>", "</think>"],
            extraVocab: ["\n", "▁I", "▁think", callPiece], script
        });
        server = await startTestServer({models: [{id: "nemotron", task: "chat", path: modelPath, contextSize: 4096, parallel: 1}]});
    }, 60_000);
    afterAll(() => server?.stop());

    it("a call comes back as tool_calls with its arguments, its thought as reasoning", async () => {
        const completion = await server.client.chat.completions.create({model: "nemotron", temperature: 0, max_tokens: 64, tools, messages});
        const [choice] = completion.choices;
        expect(choice.finish_reason).toBe("tool_calls");
        expect(choice.message.content).toBeNull();
        expect((choice.message as {reasoning_content?: string}).reasoning_content).toBe("I think");
        expect(choice.message.tool_calls!.map(callOf)).toEqual([["get_weather", {city: "Paris", days: 2}]]);
    });

    it("streamed: the deltas fold into the same call", async () => {
        const completion = await server.client.chat.completions.stream({model: "nemotron", temperature: 0, max_tokens: 64, tools, messages}).finalChatCompletion();
        expect(completion.choices[0].finish_reason).toBe("tool_calls");
        expect(completion.choices[0].message.tool_calls!.map(callOf)).toEqual([["get_weather", {city: "Paris", days: 2}]]);
    });

    it.each([false, true])("tool_choice required: the grammar writes the list after the thought, and the call parses (parallel_tool_calls %s)", async (parallel) => {
        const completion = await server.client.chat.completions.create({model: "nemotron", temperature: 0, max_tokens: 64, tools, messages,
            tool_choice: "required", parallel_tool_calls: parallel});
        const [choice] = completion.choices;
        expect(choice.finish_reason).toBe("tool_calls");
        expect(choice.message.tool_calls!.map(callOf)).toEqual([["get_weather", {city: "Paris", days: 2}]]);
    });
});
