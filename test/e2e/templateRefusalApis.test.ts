import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestLlamaGguf } from "../support/gguf/makeTestLlamaGguf.js";
import { realTemplatesDir } from "../support/realTemplateModels.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { testModelsDir } from "../support/testModels.js";

const modelPath = path.join(testModelsDir, "ministral-3-refusal-apis.gguf");
const messages = [{role: "assistant", content: "Hello!"}, {role: "user", content: "Hi"}];

describe("template refusals in the other APIs", () => {
    let server: TestServer;
    beforeAll(async () => {
        fs.mkdirSync(testModelsDir, {recursive: true});
        await makeTestLlamaGguf(modelPath, {seed: 93, chatTemplate: fs.readFileSync(path.join(realTemplatesDir, "mistralai-Ministral-3-14B-Reasoning-2512.jinja"), "utf8"),
            controlVocab: ["[INST]", "[/INST]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[THINK]", "[/THINK]"]});
        server = await startTestServer({models: [{id: "ministral", task: "chat", path: modelPath, contextSize: 1024, parallel: 1}]});
    }, 60_000);
    afterAll(() => server?.stop());

    it.each([
        ["/v1/chat/completions", {stream: true, max_tokens: 4, messages}],
        ["/v1/messages", {stream: true, max_tokens: 4, messages}],
        ["/v1/responses", {max_output_tokens: 16, input: messages}],
        ["/v1/responses", {stream: true, max_output_tokens: 16, input: messages}],
        ["/v1/messages/count_tokens", {messages}]
    ])("%s %j: a 400", async (route, body) => {
        const response = await server.post(route, {model: "ministral", ...body});
        const text = await response.text();
        expect(`${response.status} ${text.slice(0, 300)}`).toMatch(/^400 .*roles must alternate/s);
    });
});
