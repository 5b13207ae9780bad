import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath } from "../support/testModels.js";
import { realTemplateModels } from "../support/realTemplateModels.js";

const qwen3 = realTemplateModels.find((model) => model.id === "qwen3")!;

describe("explore", () => {
    let server: TestServer;
    beforeAll(async () => {
        server = await startTestServer({models: [
            {id: "tiny", task: "chat", path: tinyChatModelPath, contextSize: 512, parallel: 1, threads: 1},
            {id: "qwen3", task: "chat", path: qwen3.path, contextSize: 1024, parallel: 1, threads: 1}
        ]});
    });
    afterAll(() => server?.stop());
    it("prints", async () => {
        for (const body of [
            {model: "tiny", content: "Hello world"},
            {model: "tiny", content: "Hello world", add_special: true, with_pieces: true},
            {model: "tiny", prompt: "Hello world"},
            {model: "tiny", content: "é<|im_start|>x", with_pieces: true},
            {model: "tiny", content: "é<|im_start|>x", parse_special: false},
            {model: "qwen3", messages: [{role: "user", content: "hi"}], with_pieces: true},
            {model: "qwen3", content: "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n", with_pieces: true},
        ]) {
            const response = await server.post("/v1/tokenize", body);
            console.log(JSON.stringify(body), response.status, await response.text());
        }
        for (const tokens of [[1, 3, 400, 401], [200, 174], [1, 2, 3, 4]]) {
            const response = await server.post("/v1/detokenize", {model: "tiny", tokens});
            console.log(JSON.stringify(tokens), response.status, await response.text());
        }
        expect(1).toBe(1);
    });
});
