import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestLlamaGguf, scriptThrough } from "../support/gguf/makeTestLlamaGguf.js";
import { realTemplatesDir } from "../support/realTemplateModels.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { testModelsDir } from "../support/testModels.js";
import { followUpPrompt, itReadsTheScriptedCall } from "../support/scriptedToolCalls.js";
import { weatherQuestion as messages, weatherTools as tools } from "../support/weatherTool.js";

// ByteDance Seed-OSS (36B), on a model with its real template, scripted: after the generation prompt it thinks in
// `<seed:think>...</seed:think>`, then calls as the template writes calls (Qwen3-Coder's markup in `<seed:tool_call>`).
// Before, the model did not load (its template's thinking-budget table has integer keys, which the Jinja renderer refused),
// and its calls were not read (node-llama-cpp's detection fails on the template).

const modelPath = path.join(testModelsDir, "seed-oss-calls.gguf");
const template = () => fs.readFileSync(path.join(realTemplatesDir, "ByteDance-Seed-OSS.jinja"), "utf8");
const markup = ["<seed:bos>", "<seed:eos>", "<seed:think>", "</seed:think>", "<seed:tool_call>", "</seed:tool_call>", "<seed:cot_budget_reflect>", "</seed:cot_budget_reflect>"];
const thought = ["Weather", "▁first"];
// Each piece once (the script maps a token to the next).
const callPieces = ["\n<function=get_weather>\n", "<parameter=city>", "Paris", "</parameter>\n", "</function>\n"];

describe("ByteDance Seed-OSS (its real template)", () => {
    let server: TestServer;
    beforeAll(async () => {
        fs.mkdirSync(testModelsDir, {recursive: true});
        // The script starts from the generation prompt's last token (`<seed:bos>assistant\n`); with thinking off the
        // template's own closed thought ends it (`</seed:think>`), and the script goes on from there.
        await makeTestLlamaGguf(modelPath, {
            seed: 97, chatTemplate: template(), userDefinedVocab: markup, extraVocab: ["\n", ...thought, ...callPieces],
            script: scriptThrough(["\n", "<seed:think>", ...thought, "</seed:think>", "<seed:tool_call>", ...callPieces, "</seed:tool_call>", "<|im_end|>"])
        });
        server = await startTestServer({models: [{id: "seed", task: "chat", path: modelPath, contextSize: 4096, parallel: 1}]});
    }, 60_000);
    afterAll(() => server?.stop());

    itReadsTheScriptedCall(() => server, "seed", [["get_weather", {city: "Paris"}]], {reasoning: "Weather first", parallel: [false, true], forced: {reasoning_effort: "none"}});

    it("thinking off: the template closes the thought itself (its thinking budget 0) and the model calls at once", async () => {
        const completion = await server.client.chat.completions.create({model: "seed", temperature: 0, max_tokens: 64, messages, tools, reasoning_effort: "none"});
        const message = completion.choices[0].message as {reasoning_content?: string, tool_calls?: unknown[]};
        expect(message.reasoning_content ?? null).toBeNull();
        expect(message.tool_calls).toHaveLength(1);
        const prompt = await server.post("/v1/tokenize", {model: "seed", messages, tools, chat_template_kwargs: {thinking_budget: 0}});
        expect(completion.usage!.prompt_tokens).toBe((await prompt.json() as {count: number}).count);
    });

    it("a reasoning effort's budget goes to the template as its thinking_budget (the budget it tells the model)", async () => {
        const completion = await server.client.chat.completions.create({model: "seed", temperature: 0, max_tokens: 1, messages, reasoning_effort: "low"});
        const [budgeted, plain] = await Promise.all([1024, undefined].map(async (budget) => (await (await server.post("/v1/tokenize",
            {model: "seed", messages, ...(budget == null ? {} : {chat_template_kwargs: {thinking_budget: budget}})})).json() as {count: number}).count));
        expect(budgeted).toBeGreaterThan(plain);
        expect(completion.usage!.prompt_tokens).toBe(budgeted);
    });

    it("the follow-up's prompt has the call's thought and the call as the template writes them", async () => {
        const {text} = await followUpPrompt(server, "seed");
        expect(text).toContain("<seed:bos>assistant\n<seed:think>Weatherfirst</seed:think>\n<seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n"
            + "</function>\n</seed:tool_call><seed:eos><seed:bos>tool\nSunny,24C<seed:eos><seed:bos>assistant\n");
    });
});
