import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestLlamaGguf, scriptThrough } from "../support/gguf/makeTestLlamaGguf.js";
import { realTemplatesDir } from "../support/realTemplateModels.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { testModelsDir } from "../support/testModels.js";
import { followUpPrompt, itReadsTheScriptedCall } from "../support/scriptedToolCalls.js";
import { weatherTools as tools } from "../support/weatherTool.js";

// A model with LFM2.5-Instruct's real template (LFM2.5-1.2B-Instruct's; Liquid AI), scripted to answer with a call as
// LFM2 models write one: `<|tool_call_start|>[get_weather(city="Paris", days=2)]<|tool_call_end|>`, a Python list of
// calls between control tokens. Through the openai client: the call comes back as tool_calls with JSON arguments,
// streamed and not; forced (the grammar writes the notation); and the follow-up's prompt has the call in the assistant's
// message as the model wrote it (this template leaves `tool_calls` out: the call is part of the message's text) and the
// result in a tool message. Before, LFM2's templates had no tool support here: requests with tools got a 400.

const modelPath = path.join(testModelsDir, "lfm2-calls.gguf");
const callPieces = ["[get_weather(city=", '"Paris"', ", days=2)]"];

describe("LFM2's tool calls (LFM2.5-Instruct's real template)", () => {
    let server: TestServer;
    beforeAll(async () => {
        fs.mkdirSync(testModelsDir, {recursive: true});
        // The script starts from the generation prompt's last token (`<|im_start|>assistant\n`).
        const script = scriptThrough(["\n", "<|tool_call_start|>", ...callPieces, "<|tool_call_end|>", "<|im_end|>"]);
        await makeTestLlamaGguf(modelPath, {
            seed: 93, chatTemplate: fs.readFileSync(path.join(realTemplatesDir, "LFM2.5-Instruct.jinja"), "utf8"),
            // Its markup as control tokens (written as nothing by a plain detokenization): the output keeps the ones its parser reads.
            controlVocab: ["<|im_start|>", "<|tool_call_start|>", "<|tool_call_end|>", "<|tool_list_start|>", "<|tool_list_end|>", "<|tool_response_start|>", "<|tool_response_end|>"],
            userDefinedVocab: ["<think>", "</think>"], extraVocab: ["\n", ...callPieces], script
        });
        server = await startTestServer({models: [{id: "lfm2", task: "chat", path: modelPath, contextSize: 2048, parallel: 1}]});
    }, 60_000);
    afterAll(() => server?.stop());

    // Thinking off for the forced call: with it on, its grammar starts after the thought (the template has `<think>` blocks), which this scripted model does not write.
    itReadsTheScriptedCall(() => server, "lfm2", [["get_weather", {city: "Paris", days: 2}]], {parallel: [false, true], forced: {reasoning_effort: "none"}});

    it("the follow-up's prompt has the call in the assistant's text as the model writes it, and the result after it", async () => {
        const {followUp, tokens, text: prompt} = await followUpPrompt(server, "lfm2");
        expect(prompt).toContain(("<|im_start|>assistant\n<|tool_call_start|>[get_weather(city='Paris', days=2)]<|tool_call_end|><|im_end|>\n"
            + "<|im_start|>tool\nSunny, 24 C<|im_end|>\n<|im_start|>assistant\n").replaceAll(" ", ""));
        // The markers are the model's control tokens, not their text.
        const start = tokens.find((token) => token.piece === "<|tool_call_start|>");
        expect(start).toBeDefined();
        const served = await server.client.chat.completions.create({model: "lfm2", temperature: 0, max_tokens: 8, tools, messages: followUp});
        expect(served.usage!.prompt_tokens).toBe(tokens.length);
    });
});
