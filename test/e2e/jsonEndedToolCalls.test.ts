import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestLlamaGguf, scriptThrough } from "../support/gguf/makeTestLlamaGguf.js";
import { realTemplatesDir } from "../support/realTemplateModels.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { testModelsDir } from "../support/testModels.js";
import { callOf, weatherQuestion as messages, weatherTools as tools } from "../support/weatherTool.js";

// Call formats with no closing markup: Mistral's `[TOOL_CALLS]NAME[ARGS]{...}` (Devstral), Llama 3.1-3.3's
// `{"name": NAME, "parameters": {...}}`: the arguments' JSON object ends the call. node-llama-cpp detects these templates
// with an empty call end, which the call parser read as empty arguments: these models' calls came back as text. Models
// with the real templates (their control tokens as the real GGUFs have them), scripted to call, through the openai
// client, streamed and not.

const mistralControls = ["[INST]", "[/INST]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CALLS]", "[ARGS]", "[CALL_ID]", "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CONTENT]"];
const llamaControls = ["<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<|eom_id|>", "<|python_tag|>"];

describe.each([
    {id: "devstral", file: "unsloth-mistral-Devstral-Small-2507.jinja", controls: mistralControls, after: "[/INST]",
        call: ["[TOOL_CALLS]", "get_weather", "[ARGS]", '{"city": "Paris",', ' "days": 2}']},
    // The generation prompt ends `<|start_header_id|>assistant<|end_header_id|>\n\n`; the object closing the call follows the arguments.
    {id: "llama-3.1", file: "meta-llama-Llama-3.1-8B-Instruct.jinja", controls: llamaControls, after: "\n\n",
        call: ['{"name": "get_weather", "parameters": ', '{"city": "Paris",', ' "days": 2}}']},
    // Mistral Small 3.2 writes a call id of its own (node-llama-cpp does not detect its format: it had no tool support).
    {id: "mistral-small-3.2", file: "Mistral-Small-3.2-24B-Instruct-2506.jinja", controls: mistralControls, after: "[/INST]",
        call: ["[TOOL_CALLS]", "get_weather", "[CALL_ID]", "a1b2c3d4e", "[ARGS]", '{"city": "Paris",', ' "days": 2}']}
])("$id's tool calls (its real template)", (spec) => {
    let server: TestServer;
    const modelPath = path.join(testModelsDir, `json-ended-calls-${spec.id}.gguf`);
    beforeAll(async () => {
        fs.mkdirSync(testModelsDir, {recursive: true});
        // The script starts from the generation prompt's last token.
        await makeTestLlamaGguf(modelPath, {
            seed: 94, chatTemplate: fs.readFileSync(path.join(realTemplatesDir, spec.file), "utf8"), controlVocab: spec.controls, contextLength: 8192,
            extraVocab: [spec.after, ...spec.call].filter((piece) => !spec.controls.includes(piece)), script: scriptThrough([spec.after, ...spec.call, "<|im_end|>"])
        });
        server = await startTestServer({models: [{id: spec.id, task: "chat", path: modelPath, contextSize: 8192, parallel: 1}]});
    }, 60_000);
    afterAll(() => server?.stop());

    it("a call comes back as tool_calls, streamed and not", async () => {
        const completion = await server.client.chat.completions.create({model: spec.id, temperature: 0, max_tokens: 64, tools, messages});
        expect(completion.choices[0].finish_reason).toBe("tool_calls");
        expect(completion.choices[0].message.tool_calls!.map(callOf)).toEqual([["get_weather", {city: "Paris", days: 2}]]);
        const streamed = await server.client.chat.completions.stream({model: spec.id, temperature: 0, max_tokens: 64, tools, messages}).finalChatCompletion();
        expect(streamed.choices[0].message.tool_calls!.map(callOf)).toEqual([["get_weather", {city: "Paris", days: 2}]]);
    });

    it.each([false, true])("tool_choice required (parallel %s): the grammar lets the model write its call as it does unforced (Mistral Small 3.2's id included), and it parses", async (parallel) => {
        const completion = await server.client.chat.completions.create({model: spec.id, temperature: 0, max_tokens: 64, tools, messages, tool_choice: "required", parallel_tool_calls: parallel});
        expect(completion.choices[0].finish_reason).toBe("tool_calls");
        expect(completion.choices[0].message.tool_calls!.map(callOf)).toEqual([["get_weather", {city: "Paris", days: 2}]]);
        // The scripted call's tokens, one for one (a grammar without the id pushed Mistral Small 3.2 off its format).
        expect(completion.usage!.completion_tokens).toBe(spec.call.length);
    });

    it("the follow-up with the result is served (the call and its result rendered by the template)", async () => {
        const first = await server.client.chat.completions.create({model: spec.id, temperature: 0, max_tokens: 64, tools, messages});
        const call = first.choices[0].message.tool_calls![0];
        const followUp = await server.client.chat.completions.create({
            model: spec.id, temperature: 0, max_tokens: 8, tools,
            messages: [...messages, first.choices[0].message, {role: "tool", tool_call_id: call.id, content: "Sunny, 24 C"}]
        });
        expect(followUp.usage!.prompt_tokens).toBeGreaterThan(first.usage!.prompt_tokens + 10);
    });
});

// What Llama 3.x models write besides the template's spelling, which llama.cpp reads too: OpenAI's `"type": "function"`
// first and no spaces (Llama 3.2 often), and a call after `<|python_tag|>` ended by `<|eom_id|>` (Llama 3.1's tool-use
// turn). Models with the real Llama 3.1 template scripted to write them, through the openai client.
describe.each([
    {id: "type-first", script: ['{"type":"function",', '"name":"get_weather",', '"parameters":', '{"city":"Paris",', '"days":2}}', "<|eot_id|>"]},
    {id: "python-tag", script: ["<|python_tag|>", '{"name": "get_weather", "parameters": ', '{"city": "Paris",', ' "days": 2}}', "<|eom_id|>"]}
])("Llama 3.x's call written $id (its real template)", ({id, script}) => {
    let server: TestServer;
    const modelPath = path.join(testModelsDir, `json-ended-calls-llama-${id}.gguf`);
    beforeAll(async () => {
        fs.mkdirSync(testModelsDir, {recursive: true});
        await makeTestLlamaGguf(modelPath, {
            seed: 94, chatTemplate: fs.readFileSync(path.join(realTemplatesDir, "meta-llama-Llama-3.1-8B-Instruct.jinja"), "utf8"), controlVocab: llamaControls,
            contextLength: 8192, extraVocab: ["\n\n", ...script].filter((piece) => !llamaControls.includes(piece)), script: scriptThrough(["\n\n", ...script])
        });
        server = await startTestServer({models: [{id: "llama", task: "chat", path: modelPath, contextSize: 8192, parallel: 1}]});
    }, 60_000);
    afterAll(() => server?.stop());

    it("comes back as tool_calls, streamed and not", async () => {
        const completion = await server.client.chat.completions.create({model: "llama", temperature: 0, max_tokens: 64, tools, messages});
        expect(completion.choices[0].finish_reason).toBe("tool_calls");
        expect(completion.choices[0].message.content).toBeNull();
        expect(completion.choices[0].message.tool_calls!.map(callOf)).toEqual([["get_weather", {city: "Paris", days: 2}]]);
        const streamed = await server.client.chat.completions.stream({model: "llama", temperature: 0, max_tokens: 64, tools, messages}).finalChatCompletion();
        expect(streamed.choices[0].finish_reason).toBe("tool_calls");
        expect(streamed.choices[0].message.content).toBeNull();
        expect(streamed.choices[0].message.tool_calls!.map(callOf)).toEqual([["get_weather", {city: "Paris", days: 2}]]);
    });
});
