import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestLlamaGguf, scriptThrough } from "../support/gguf/makeTestLlamaGguf.js";
import { realTemplatesDir } from "../support/realTemplateModels.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { testModelsDir } from "../support/testModels.js";
import { followUpPrompt, itReadsTheScriptedCall } from "../support/scriptedToolCalls.js";

// A model with Kimi-K2-Instruct's real template, scripted to call as Kimi-K2 does (llama.cpp's tests/test-chat.cpp):
// `<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{...}<|tool_call_end|><|tool_calls_section_end|>`.
// Through the openai client: the call comes back as tool_calls, streamed and not, and forced; the follow-up's prompt has
// the call as the model wrote it and its result named by the call's id. Before, this template had no tool support here (a 400).

const modelPath = path.join(testModelsDir, "kimi-calls.gguf");
const args = '{"city": "Paris", "days": 2}';
const markup = ["<|im_system|>", "<|im_user|>", "<|im_assistant|>", "<|im_middle|>", "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>",
    "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"];

describe("Kimi-K2's tool calls (Kimi-K2-Instruct's real template)", () => {
    let server: TestServer;
    beforeAll(async () => {
        fs.mkdirSync(testModelsDir, {recursive: true});
        // The script starts from the generation prompt's last token (`<|im_middle|>`).
        const script = scriptThrough(["<|im_middle|>", "<|tool_calls_section_begin|>", "<|tool_call_begin|>", "functions.get_weather:0", "<|tool_call_argument_begin|>",
            args, "<|tool_call_end|>", "<|tool_calls_section_end|>", "<|im_end|>"]);
        await makeTestLlamaGguf(modelPath, {
            seed: 95, chatTemplate: fs.readFileSync(path.join(realTemplatesDir, "Kimi-K2-Instruct.jinja"), "utf8"), contextLength: 4096,
            controlVocab: markup, extraVocab: ["functions.get_weather:0", args], script
        });
        server = await startTestServer({models: [{id: "kimi", task: "chat", path: modelPath, contextSize: 4096, parallel: 1}]});
    }, 60_000);
    afterAll(() => server?.stop());

    itReadsTheScriptedCall(() => server, "kimi", [["get_weather", {city: "Paris", days: 2}]], {parallel: [false, true]});

    it("the follow-up's prompt has the call as the model writes it and the result named by its id", async () => {
        const {text: prompt} = await followUpPrompt(server, "kimi");
        expect(prompt).toContain(("<|im_assistant|>assistant<|im_middle|><|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
            + `<|tool_call_argument_begin|>${args}<|tool_call_end|><|tool_calls_section_end|><|im_end|>`
            + "<|im_system|>tool<|im_middle|>## Return of functions.get_weather:0\nSunny, 24 C<|im_end|><|im_assistant|>assistant<|im_middle|>").replaceAll(" ", ""));
    });
});
