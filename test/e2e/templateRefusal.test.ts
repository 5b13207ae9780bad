import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeTestLlamaGguf } from "../support/gguf/makeTestLlamaGguf.js";
import { realTemplatesDir } from "../support/realTemplateModels.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { testModelsDir } from "../support/testModels.js";

// Ministral-3's real template raises unless roles alternate after the system message. Codex's first request (two
// developer messages, then two user messages) was a 500 for such a model: the messages are joined now, as the template
// needs. A conversation joining cannot mend (an answer first) gets a 400 that names `messages` and carries the
// template's own words, in each API's error shape, not a 500.

const modelPath = path.join(testModelsDir, "ministral-3-refusal.gguf");
/** A conversation that starts with an answer: the template refuses it, and joining messages cannot mend it. */
const answerFirst = [{role: "assistant", content: "Hello!"}, {role: "user", content: "Hi"}];

describe("a template that raises on a request's shape (Ministral-3's real template)", () => {
    let server: TestServer;
    beforeAll(async () => {
        fs.mkdirSync(testModelsDir, {recursive: true});
        await makeTestLlamaGguf(modelPath, {seed: 93, chatTemplate: fs.readFileSync(path.join(realTemplatesDir, "mistralai-Ministral-3-14B-Reasoning-2512.jinja"), "utf8"),
            controlVocab: ["[INST]", "[/INST]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[THINK]", "[/THINK]"]});
        server = await startTestServer({models: [{id: "ministral", task: "chat", path: modelPath, contextSize: 1024, parallel: 1}]});
    }, 60_000);
    afterAll(() => server?.stop());

    it("Codex's shape (two developer messages, two user messages): answered", async () => {
        const response = await server.client.responses.create({model: "ministral", max_output_tokens: 4, input: [
            {role: "developer", content: "Rules."}, {role: "developer", content: "More rules."},
            {role: "user", content: "Context."}, {role: "user", content: "Say hello."}
        ]});
        expect(response.status).toBe("incomplete");
        expect(response.usage!.output_tokens).toBe(4);
    });

    it("an answer first: a 400 naming messages with the template's words (chat completions and Anthropic messages)", async () => {
        const chat = await server.post("/v1/chat/completions", {model: "ministral", max_tokens: 4, messages: answerFirst});
        expect(chat.status).toBe(400);
        const chatError = (await chat.json() as {error: {message: string, param: string}}).error;
        expect(chatError.param).toBe("messages");
        expect(chatError.message).toMatch(/chat template does not take this conversation: After the optional system message, conversation roles must alternate/);
        const anthropic = await server.post("/v1/messages", {model: "ministral", max_tokens: 4, messages: answerFirst});
        expect(anthropic.status).toBe(400);
        expect(await anthropic.json()).toMatchObject({type: "error", error: {type: "invalid_request_error", message: expect.stringMatching(/roles must alternate/)}});
    });

    // The other APIs and their streams: the same 400 with the template's words.
    it.each([
        ["/v1/chat/completions", {stream: true, max_tokens: 4, messages: answerFirst}],
        ["/v1/messages", {stream: true, max_tokens: 4, messages: answerFirst}],
        ["/v1/responses", {max_output_tokens: 16, input: answerFirst}],
        ["/v1/responses", {stream: true, max_output_tokens: 16, input: answerFirst}],
        ["/v1/messages/count_tokens", {messages: answerFirst}]
    ])("%s %j: a 400", async (route, body) => {
        const response = await server.post(route, {model: "ministral", ...body});
        const text = await response.text();
        expect(`${response.status} ${text.slice(0, 300)}`).toMatch(/^400 .*roles must alternate/s);
    });
});
