import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe } from "vitest";
import { makeTestLlamaGguf, scriptThrough } from "../support/gguf/makeTestLlamaGguf.js";
import { realTemplatesDir } from "../support/realTemplateModels.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { testModelsDir } from "../support/testModels.js";
import { itReadsTheScriptedCall } from "../support/scriptedToolCalls.js";

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

    itReadsTheScriptedCall(() => server, "nemotron", [["get_weather", {city: "Paris", days: 2}]], {reasoning: "I think", parallel: [false, true]});
});
