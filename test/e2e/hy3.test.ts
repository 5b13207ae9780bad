import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestLlamaGguf, scriptThrough } from "../support/gguf/makeTestLlamaGguf.js";
import { realTemplatesDir } from "../support/realTemplateModels.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { testModelsDir } from "../support/testModels.js";
import { followUpPrompt, itReadsTheScriptedCall } from "../support/scriptedToolCalls.js";
import { callOf, weatherQuestion as messages, weatherTools as tools } from "../support/weatherTool.js";

// Tencent Hy3, on a model with its real template, scripted: with thinking on it thinks in `<think:opensource>`, then
// calls as the template writes calls (GLM-like markup in `<tool_calls:opensource>`, each tag with `:opensource`). Its
// template's effort is `no_think` unless asked (`low`/`high`; it refuses any other). Before, the model did not load (the
// template writes its tags with Python's str.format), and node-llama-cpp's detection cut its call markup mid-tag.

const modelPath = path.join(testModelsDir, "hy3-calls.gguf");
const template = () => fs.readFileSync(path.join(realTemplatesDir, "tencent-Hy3.jinja"), "utf8");
const markup = ["<｜hy_begin_of_sentence:opensource｜>", "<｜hy_User:opensource｜>", "<｜hy_Assistant:opensource｜>", "<｜hy_eos:opensource｜>",
    "<｜reasoning_mode:opensource｜>", "<think:opensource>", "</think:opensource>"];
const thought = ["Weather", "▁first"];
// Each piece once (the script maps a token to the next).
const callPieces = ["<tool_calls:opensource>", "\n<tool_call:opensource>", "get_weather", "<tool_sep:opensource>", "\n<arg_key:opensource>", "city",
    "</arg_key:opensource>", "\n<arg_value:opensource>", "Paris", "</arg_value:opensource>", "\n</tool_call:opensource>", "\n</tool_calls:opensource>"];

describe("Tencent Hy3 (its real template)", () => {
    let server: TestServer;
    beforeAll(async () => {
        fs.mkdirSync(testModelsDir, {recursive: true});
        // Thinking off (the template's default) ends the prompt with its closed thought, thinking on with the thought opened.
        await makeTestLlamaGguf(modelPath, {
            seed: 98, chatTemplate: template(), userDefinedVocab: markup, extraVocab: [...thought, ...callPieces],
            script: scriptThrough(["<think:opensource>", ...thought, "</think:opensource>", ...callPieces, "<|im_end|>"])
        });
        server = await startTestServer({models: [{id: "hy3", task: "chat", path: modelPath, contextSize: 4096, parallel: 1}]});
    }, 60_000);
    afterAll(() => server?.stop());

    itReadsTheScriptedCall(() => server, "hy3", [["get_weather", {city: "Paris"}]], {parallel: [false, true]});

    it.each(["low", "medium", "high"] as const)("reasoning_effort %s: the model thinks (an effort the template does not take is its highest), then calls", async (effort) => {
        const completion = await server.client.chat.completions.create({model: "hy3", temperature: 0, max_tokens: 64, messages, tools, reasoning_effort: effort});
        const message = completion.choices[0].message as {reasoning_content?: string};
        expect(message.reasoning_content).toBe("Weather first");
        expect(completion.choices[0].message.tool_calls!.map(callOf)).toEqual([["get_weather", {city: "Paris"}]]);
    });

    it("a forced call or JSON with no reasoning asked for: the template's closed thought stands, none is reopened (found by review)", async () => {
        const auto = await server.client.chat.completions.create({model: "hy3", temperature: 0, max_tokens: 64, messages, tools});
        for (const forced of [{tools, tool_choice: "required" as const}, {response_format: {type: "json_object" as const}}]) {
            const asked = "tools" in forced ? messages : [{role: "user" as const, content: "The weather in Paris, as JSON?"}];
            const completion = await server.client.chat.completions.create({model: "hy3", temperature: 0, max_tokens: 64, messages: asked, ...forced});
            expect((completion.choices[0].message as {reasoning_content?: string}).reasoning_content ?? null).toBeNull();
            expect(completion.usage!.completion_tokens_details?.reasoning_tokens ?? 0).toBe(0);
            if ("tools" in forced)
                expect(completion.usage!.prompt_tokens).toBe(auto.usage!.prompt_tokens);
        }
    });

    it("the follow-up's prompt has the call as the template writes it", async () => {
        const {text} = await followUpPrompt(server, "hy3");
        expect(text).toContain("<｜hy_Assistant:opensource｜><think:opensource></think:opensource><tool_calls:opensource>\n<tool_call:opensource>get_weather<tool_sep:opensource>\n"
            + "<arg_key:opensource>city</arg_key:opensource>\n<arg_value:opensource>Paris</arg_value:opensource>\n</tool_call:opensource>\n</tool_calls:opensource>");
    });
});
