import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestLlamaGguf } from "../support/gguf/makeTestLlamaGguf.js";
import { realTemplatesDir } from "../support/realTemplateModels.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { testModelsDir } from "../support/testModels.js";

// Kimi-K3's real template (llama.cpp's models/templates) raises on a thinking_effort it does not know. That refusal comes
// from chat_template_kwargs, when the wrapper for those kwargs is built (ChatPromptRenderer.wrapperFor): outside the try
// that makes a TemplateRefusedError of it.
const templatePath = path.join(realTemplatesDir, "Kimi-K3.jinja");
const modelPath = path.join(testModelsDir, "kimi-k3-refusal.gguf");

describe("a template that raises on chat_template_kwargs", () => {
    let server: TestServer;
    beforeAll(async () => {
        fs.mkdirSync(testModelsDir, {recursive: true});
        await makeTestLlamaGguf(modelPath, {seed: 97, chatTemplate: fs.readFileSync(templatePath, "utf8")});
        server = await startTestServer({models: [{id: "kimi", task: "chat", path: modelPath, contextSize: 1024, parallel: 1}]});
    }, 60_000);
    afterAll(() => server?.stop());

    it("an unsupported thinking_effort: a 400 with the template's words, not a 500", async () => {
        const response = await server.post("/v1/chat/completions", {model: "kimi", max_tokens: 4, messages: [{role: "user", content: "Hi"}],
            chat_template_kwargs: {thinking: true, thinking_effort: "medium"}});
        const body = await response.json() as {error: {message: string}};
        expect(body.error?.message ?? "").toMatch(/Unsupported thinking_effort/);
        expect(response.status).toBe(400);
        expect((body.error as {param?: string}).param).toBe("chat_template_kwargs");
    });
});
