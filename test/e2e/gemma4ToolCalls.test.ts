import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestLlamaGguf, scriptThrough } from "../support/gguf/makeTestLlamaGguf.js";
import { realTemplatesDir } from "../support/realTemplateModels.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { testModelsDir } from "../support/testModels.js";
import { itReadsTheScriptedCall } from "../support/scriptedToolCalls.js";
import { weatherQuestion as messages, weatherTools as tools } from "../support/weatherTool.js";

// A model with Gemma 4's real template, scripted to think and then call a function as Gemma 4 does:
// `<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:2}<tool_call|>`, its arguments in its own notation (strings
// between `<|"|>` marks), then `<|tool_response>` (an end of generation, as llama.cpp loads Gemma 4). Through the openai
// client: the call comes back as tool_calls with JSON arguments, its thought as reasoning, streamed and not; forced
// (the grammar writes the notation); the follow-up with the result renders. Before, Gemma 4's template had no tool
// support here (node-llama-cpp did not recognise its call format): requests with tools got a 400.

const modelPath = path.join(testModelsDir, "gemma4-calls.gguf");
const callPieces = ["<|tool_call>call:get_weather{city:", '<|"|>Paris<|"|>', ",days:2}<tool_call|>"];

describe("Gemma 4's tool calls (its real template)", () => {
    let server: TestServer;
    beforeAll(async () => {
        fs.mkdirSync(testModelsDir, {recursive: true});
        // The script starts from the generation prompt's last token (`<|turn>model\n`).
        const script = scriptThrough(["\n", "<|channel>thought", "▁I", "▁think", "<channel|>", ...callPieces, "<|tool_response>"]);
        await makeTestLlamaGguf(modelPath, {
            seed: 92, chatTemplate: fs.readFileSync(path.join(realTemplatesDir, "google-gemma-4-31B-it.jinja"), "utf8"),
            // Its markup as control tokens (written as nothing by a plain detokenization): the output keeps the ones its parsers read.
            controlVocab: ["<|turn>", "<turn|>", "<|channel>", "<channel|>", "<|think|>", "<|tool_call>", "<tool_call|>", "<|tool>", "<tool|>", "<tool_response|>", '<|"|>',
                "<|tool_response>"],
            extraVocab: ["\n", "<|channel>thought", ...callPieces], script
        });
        server = await startTestServer({models: [{id: "gemma4", task: "chat", path: modelPath, contextSize: 2048, parallel: 1}]});
    }, 60_000);
    afterAll(() => server?.stop());

    // Thinking off for the forced call: with it on, Gemma 4 thinks first and the grammar writes the call after the thought.
    itReadsTheScriptedCall(() => server, "gemma4", [["get_weather", {city: "Paris", days: 2}]], {reasoning: "I think", forced: {reasoning_effort: "none"}});

    it("the follow-up with the result is served (the call and its result rendered by the template)", async () => {
        const first = await server.client.chat.completions.create({model: "gemma4", temperature: 0, max_tokens: 64, tools, messages});
        const call = first.choices[0].message.tool_calls![0];
        const followUp = await server.client.chat.completions.create({
            model: "gemma4", temperature: 0, max_tokens: 64, tools,
            messages: [...messages, first.choices[0].message, {role: "tool", tool_call_id: call.id, content: "Sunny, 24 C"}]
        });
        expect(followUp.usage!.prompt_tokens).toBeGreaterThan(first.usage!.prompt_tokens + 10);
    });
});
