import fs from "node:fs";
import path from "node:path";
import { LlamaGrammar, type LlamaModel } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatPromptRenderer } from "../../src/capabilities/chat/llama/ChatPromptRenderer.js";
import { toolCallGrammarText } from "../../src/capabilities/chat/llama/toolCallGrammar.js";
import { argumentsReader, parseToolCalls } from "../../src/capabilities/chat/llama/parseToolCalls.js";
import { streamToolCalls } from "../support/streamToolCalls.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import { makeTestLlamaGguf } from "../support/gguf/makeTestLlamaGguf.js";
import { promptText, realTemplatesDir } from "../support/realTemplateModels.js";
import { testModelsDir } from "../support/testModels.js";

// Real templates whose calls write each argument in markup (test/fixtures/templates), beyond the tool loops that
// realTemplateToolLoop.test.ts compares prompt for prompt: a null argument (Qwen3-Coder's `| string` fails on it, and
// node-llama-cpp then fell back to its own format for the whole prompt), DeepSeek-V4's call without arguments (a line
// more), and forced-call grammars for the schema shapes clients send (enums, nullable strings, free-form objects).

async function modelWith(file: string): Promise<LlamaModel> {
    fs.mkdirSync(testModelsDir, {recursive: true});
    const modelPath = path.join(testModelsDir, `markup-template-${file}.gguf`);
    await makeTestLlamaGguf(modelPath, {seed: 81, chatTemplate: fs.readFileSync(path.join(realTemplatesDir, file), "utf8"),
        userDefinedVocab: ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]});
    const llama = await loadLlamaRuntime({gpu: "off"});
    return llama.loadModel({modelPath});
}

describe("templates with arguments in markup", () => {
    let coder: LlamaModel;
    let deepseek: LlamaModel;
    beforeAll(async () => {
        coder = await modelWith("Qwen3-Coder.jinja");
        deepseek = await modelWith("deepseek-ai-DeepSeek-V4.jinja");
    });
    afterAll(async () => {
        await coder?.dispose();
        await deepseek?.dispose();
    });

    it("a null argument renders as Python's template writes it, and the other calls stay in markup", () => {
        const renderer = new ChatPromptRenderer(coder);
        const text = promptText(coder, renderer.renderTemplate([
            {role: "user", content: "List then show the folder."},
            {role: "assistant", content: "", toolCalls: [
                {name: "run", arguments: {cmd: "ls"}, result: "a b"},
                {name: "run", arguments: {cmd: "pwd", timeout: null}, result: "/home"}
            ]}
        ], [{name: "run", parameters: {type: "object", properties: {cmd: {type: "string"}, timeout: {type: ["integer", "null"]}}}}]));
        expect(text).toContain("<function=run>\n<parameter=cmd>\nls\n</parameter>\n</function>");
        expect(text).toContain("<function=run>\n<parameter=cmd>\npwd\n</parameter>\n<parameter=timeout>\nNone\n</parameter>\n</function>");
        expect(text).not.toContain("<parameter=params>");
    });

    it("DeepSeek-V4's markup is read though its call without arguments has a line more; a value not a string has its own key end", () => {
        const format = new ChatPromptRenderer(deepseek).toolCallFormat;
        expect(format?.parameters).toEqual({keyStart: "｜DSML｜parameter name=\"", keyEnd: "\" string=\"true\">", valueEnd: "</｜DSML｜parameter>\n<",
            jsonKeyEnd: "\" string=\"false\">"});
    });

    // What these models write, as llama.cpp's tests/test-chat.cpp has it (DeepSeek-V3.2's and V4's DSML: `string="false"`
    // before a value that is JSON; MiniMax-M2's block): read whole and streamed, and nothing of the block's opening tag left
    // in the content (`<｜DSML｜tool_calls`, `<minimax:tool_call` were; calls with a number were text).
    it.each([
        ["deepseek-ai-DeepSeek-V4.jinja", "Let me call the function.\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"special_function\">\n<｜DSML｜parameter name=\"arg1\" string=\"false\">1</｜DSML｜parameter>\n</｜DSML｜invoke>\n"
            + "<｜DSML｜invoke name=\"get_time\">\n<｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜parameter>\n<｜DSML｜parameter name=\"opts\" string=\"false\">{\"days\": [1, 2]}</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>"],
        ["deepseek-ai-DeepSeek-V3.2.jinja", "Let me call the function.\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"special_function\">\n<｜DSML｜parameter name=\"arg1\" string=\"false\">1</｜DSML｜parameter>\n</｜DSML｜invoke>\n"
            + "<｜DSML｜invoke name=\"get_time\">\n<｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜parameter>\n<｜DSML｜parameter name=\"opts\" string=\"false\">{\"days\": [1, 2]}</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>"],
        ["MiniMax-M2.jinja", "Let me call the function.\n\n<minimax:tool_call>\n<invoke name=\"special_function\">\n<parameter name=\"arg1\">1</parameter>\n</invoke>\n"
            + "<invoke name=\"get_time\">\n<parameter name=\"city\">Paris</parameter>\n<parameter name=\"opts\">{\"days\": [1, 2]}</parameter>\n</invoke>\n</minimax:tool_call>"],
        // A value holding the call's end (`/invoke`, as a URL of a LangServe or Dapr route does) is the value's.
        ["MiniMax-M2.jinja", "Let me call the function.\n\n<minimax:tool_call>\n<invoke name=\"special_function\">\n<parameter name=\"arg1\">1</parameter>\n</invoke>\n"
            + "<invoke name=\"get_time\">\n<parameter name=\"city\">http://localhost:8000/chain/invoke</parameter>\n<parameter name=\"opts\">{\"days\": [1, 2]}</parameter>\n</invoke>\n</minimax:tool_call>"],
        // Blank lines between the calls and before the block's end, where the template writes one line break.
        ["MiniMax-M2.jinja", "Let me call the function.\n\n<minimax:tool_call>\n<invoke name=\"special_function\">\n<parameter name=\"arg1\">1</parameter>\n</invoke>\n\n"
            + "<invoke name=\"get_time\">\n<parameter name=\"city\">Paris</parameter>\n<parameter name=\"opts\">{\"days\": [1, 2]}</parameter>\n</invoke>\n\n</minimax:tool_call>"],
        ["deepseek-ai-DeepSeek-V4.jinja", "Let me call the function.\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"special_function\">\n<｜DSML｜parameter name=\"arg1\" string=\"false\">1</｜DSML｜parameter>\n</｜DSML｜invoke>\n"
            + "<｜DSML｜invoke name=\"get_time\">\n<｜DSML｜parameter name=\"city\" string=\"true\">a/｜DSML｜invoke b</｜DSML｜parameter>\n<｜DSML｜parameter name=\"opts\" string=\"false\">{\"days\": [1, 2]}</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>"]
    ])("%s: calls in the template's block are read, streamed and not, with their typed values", async (file, text) => {
        const model = await modelWith(file);
        try {
            const format = new ChatPromptRenderer(model).toolCallFormat!;
            const functions = [{name: "special_function", parameters: {type: "object", properties: {arg1: {type: "integer"}}}},
                {name: "get_time", parameters: {type: "object", properties: {city: {type: "string"}, opts: {type: "object"}}}}];
            const names = new Set(functions.map((fn) => fn.name));
            const read = argumentsReader(format, functions);
            const city = /name="city"[^>]*>([^<]*)</.exec(text)![1];
            const expected = [["special_function", {arg1: 1}], ["get_time", {city, opts: {days: [1, 2]}}]];
            const parsed = parseToolCalls(text, format, names, false, read)!;
            expect(parsed.content).toBe("Let me call the function.");
            expect(parsed.calls.map((call) => [call.name, JSON.parse(call.arguments)])).toEqual(expected);
            // A forced call's grammar writes the block, and a value that is not a string after its own key end.
            const llama = await loadLlamaRuntime({gpu: "off"});
            const grammar = toolCallGrammarText(llama, format, functions.map((fn) => ({name: fn.name, schema: fn.parameters})), true);
            expect(grammar.split("\n")[0]).toContain(JSON.stringify(format.list!.end).slice(1, -1));
            if (format.parameters?.jsonKeyEnd != null)
                expect(grammar).toContain(JSON.stringify(format.parameters.keyStart + "arg1" + format.parameters.jsonKeyEnd).slice(1, -1));
            expect(() => new LlamaGrammar(llama, {grammar})).not.toThrow();
            for (const size of [1, 5, 17, 1000]) {
                const streamed = streamToolCalls(format, names, text, true, Array.from({length: Math.ceil(text.length / size)}, (_, index) => index * size).slice(1), read);
                expect(streamed.content).toBe("Let me call the function.");
                expect(streamed.calls.map((call) => [call.name, JSON.parse(call.arguments)])).toEqual(expected);
            }
        } finally {
            await model.dispose();
        }
    });

    it("forced-call grammars compile for enums, nullable strings, numbers, nested objects and free-form arguments", async () => {
        const llama = await loadLlamaRuntime({gpu: "off"});
        const format = new ChatPromptRenderer(coder).toolCallFormat!;
        const grammar = toolCallGrammarText(llama, format, [
            {name: "get_weather", schema: {type: "object", properties: {
                city: {type: "string"}, unit: {enum: ["c", "f"]}, note: {type: ["string", "null"]}, days: {type: "integer"},
                opts: {type: "object", properties: {deep: {type: "boolean"}}}
            }, required: ["city"]}},
            {name: "anything", schema: {type: "object"}}
        ], true);
        // Values that may be strings are text; the integer and the object follow their schemas' JSON.
        expect(grammar).toContain('"parameter=unit>\\n" tool0-text "\\n</parameter>\\n<"');
        expect(grammar).toContain('"parameter=note>\\n" tool0-text');
        expect(grammar).toMatch(/"parameter=days>\\n" tool0-p3-root/);
        expect(grammar).toMatch(/tool1-root ::= \( "parameter=" \[a-zA-Z0-9_.-\]\+/);
        expect(() => new LlamaGrammar(llama, {grammar})).not.toThrow();
    });
});
