import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestLlamaGguf, scriptThrough } from "../support/gguf/makeTestLlamaGguf.js";
import { realTemplatesDir } from "../support/realTemplateModels.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { streamedChat } from "../support/streamedChat.js";
import { testModelsDir } from "../support/testModels.js";
import { weatherQuestion as messages } from "../support/weatherTool.js";

// Apriel-1.6's thought (ServiceNow): its template's generation prompt opens it (`Here are my reasoning steps:\n`) and the
// model ends it with `[BEGIN FINAL RESPONSE]`, then answers. On a model with its real template, scripted so. Before, the
// thought and the marker were the answer's text.

const modelPath = path.join(testModelsDir, "apriel-reasoning.gguf");
const close = "\n[BEGIN FINAL RESPONSE]\n";

describe("Apriel-1.6's reasoning (its real template)", () => {
    let server: TestServer;
    beforeAll(async () => {
        fs.mkdirSync(testModelsDir, {recursive: true});
        // The script starts from the generation prompt's last token (the line break after "steps:"); with thinking off the
        // prompt ends with the marker, and the script goes on from there.
        await makeTestLlamaGguf(modelPath, {
            seed: 99, chatTemplate: fs.readFileSync(path.join(realTemplatesDir, "Apriel-1.6-15b-Thinker-fixed.jinja"), "utf8"),
            controlVocab: ["<|begin_system|>", "<|begin_user|>", "<|begin_assistant|>", "<|end|>"],
            extraVocab: ["\n", "Weather", "▁first", close, "Hello", "▁there"],
            script: scriptThrough(["\n", "Weather", "▁first", close, "Hello", "▁there", "<|im_end|>"])
        });
        server = await startTestServer({models: [{id: "apriel", task: "chat", path: modelPath, contextSize: 2048, parallel: 1}]});
    }, 60_000);
    afterAll(() => server?.stop());

    it("the thought is reasoning_content and the answer after the marker is the content, streamed alike", async () => {
        const request = {model: "apriel", temperature: 0, max_tokens: 32, messages};
        const completion = await server.client.chat.completions.create(request);
        const message = completion.choices[0].message as {content: string | null, reasoning_content?: string};
        expect([message.reasoning_content, message.content]).toEqual(["Weather first", "Hello there"]);
        expect(await streamedChat(server.client, request)).toEqual({reasoning: "Weather first", content: "Hello there"});
    });

    it("thinking off: the prompt closes the opened thought with the marker, and what the model writes is all answer", async () => {
        const on = await server.client.chat.completions.create({model: "apriel", temperature: 0, max_tokens: 1, messages});
        const off = await server.client.chat.completions.create({model: "apriel", temperature: 0, max_tokens: 32, messages, reasoning_effort: "none"});
        // The scripted model writes its thought anyway (its script does not read the marker's tokens): here it is answer.
        expect([(off.choices[0].message as {reasoning_content?: string}).reasoning_content ?? null, off.choices[0].message.content]).toEqual([null, "Weather first" + close + "Hello there"]);
        expect(off.usage!.prompt_tokens).toBeGreaterThan(on.usage!.prompt_tokens);
    });
});
