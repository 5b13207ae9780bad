import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestLlamaGguf, scriptThrough } from "../support/gguf/makeTestLlamaGguf.js";
import { realTemplatesDir } from "../support/realTemplateModels.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { testModelsDir } from "../support/testModels.js";
import { callOf, weatherQuestion as messages, weatherTools as tools } from "../support/weatherTool.js";

// A model with Qwen3-Coder's real template, scripted to answer with a call written as Qwen3-Coder writes one (each
// argument in markup), through the openai client: the call comes back as tool_calls with the JSON arguments a client
// expects (the integer typed by the function's schema), streamed and not, and with tool_choice required (the grammar
// then holds the model to the markup). Before, these templates got node-llama-cpp's one `params` argument holding
// JSON: the model's real calls came back as text.

const modelPath = path.join(testModelsDir, "markup-calls-qwen3-coder.gguf");
const callPieces = ["\n<function=get_weather>\n<parameter=city>\n", "Paris", "\n</parameter>\n<parameter=days>\n", "2", "\n</parameter>\n</function>\n"];

describe("tool calls with arguments in markup (Qwen3-Coder's real template)", () => {
    let server: TestServer;
    beforeAll(async () => {
        fs.mkdirSync(testModelsDir, {recursive: true});
        // The script starts from the generation prompt's last token (`<|im_start|>assistant\n`).
        const script = scriptThrough(["\n", "<tool_call>", ...callPieces, "</tool_call>", "<|im_end|>"]);
        await makeTestLlamaGguf(modelPath, {
            seed: 90, chatTemplate: fs.readFileSync(path.join(realTemplatesDir, "Qwen3-Coder.jinja"), "utf8"),
            userDefinedVocab: ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"], extraVocab: callPieces, script
        });
        server = await startTestServer({models: [{id: "coder", task: "chat", path: modelPath, contextSize: 1024, parallel: 1}]});
    }, 60_000);
    afterAll(() => server?.stop());

    it("a call comes back as tool_calls with typed JSON arguments", async () => {
        const completion = await server.client.chat.completions.create({model: "coder", temperature: 0, max_tokens: 64, tools, messages});
        const [choice] = completion.choices;
        expect(choice.finish_reason).toBe("tool_calls");
        expect(choice.message.content).toBeNull();
        const [call] = choice.message.tool_calls!;
        if (call.type !== "function")
            throw new Error("not a function call");
        expect(call.function.name).toBe("get_weather");
        expect(JSON.parse(call.function.arguments)).toEqual({city: "Paris", days: 2});
    });

    it("streamed: the deltas fold into the same call", async () => {
        const stream = server.client.chat.completions.stream({model: "coder", temperature: 0, max_tokens: 64, tools, messages});
        const completion = await stream.finalChatCompletion();
        const [choice] = completion.choices;
        expect(choice.finish_reason).toBe("tool_calls");
        expect(choice.message.tool_calls?.map(callOf))
            .toEqual([["get_weather", {city: "Paris", days: 2}]]);
    });

    it("tool_choice required: the grammar holds the model to the markup, and the call parses", async () => {
        const completion = await server.client.chat.completions.create({
            model: "coder", temperature: 0, max_tokens: 64, tools, messages, tool_choice: "required", parallel_tool_calls: false
        });
        const [choice] = completion.choices;
        expect(choice.finish_reason).toBe("tool_calls");
        const [call] = choice.message.tool_calls!;
        expect(callOf(call)).toEqual(["get_weather", {city: "Paris", days: 2}]);
    });
});
