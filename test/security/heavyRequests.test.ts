import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonOf, startTestServer, type TestServer } from "../support/startTestServer.js";
import { storiesModelPath, tinyChatModelPath } from "../support/testModels.js";

// Requests that are heavy by construction are refused before the heavy part runs on the main
// thread: a prompt that cannot fit by its length alone is not tokenized ("at least N tokens"), and
// a schema past the grammar builder's bounds is not compiled.
let server: TestServer;
beforeAll(async () => {
    server = await startTestServer({models: [
        {id: "tiny", task: "chat", path: tinyChatModelPath, contextSize: 256, parallel: 1},
        {id: "stories", task: "chat", path: storiesModelPath, contextSize: 512, parallel: 1}
    ]});
});
afterAll(() => server.stop());

const nineMegabytes = "The quick brown fox jumps over the lazy dog. ".repeat(9 * 1024 * 1024 / 45);

describe("over-long prompts are refused by their length, before tokenizing", () => {
    for (const model of ["tiny", "stories"]) {
        it(`chat completions (${model})`, async () => {
            const response = await server.post("/v1/chat/completions", {model, messages: [{role: "user", content: nineMegabytes}], max_tokens: 1});
            expect(response.status).toBe(400);
            const {error} = await jsonOf(response);
            expect(error).toMatchObject({code: "context_length_exceeded", param: "messages"});
            expect(error.message).toMatch(/resulted in at least \d+ tokens/);
        });

        it(`legacy completions (${model})`, async () => {
            const response = await server.post("/v1/completions", {model, prompt: nineMegabytes, max_tokens: 1});
            expect(response.status).toBe(400);
            expect((await jsonOf(response)).error.message).toMatch(/at least \d+ tokens/);
        });
    }

    it("a prompt that might fit is still tokenized and counted exactly", async () => {
        const response = await server.post("/v1/chat/completions", {model: "tiny", messages: [{role: "user", content: "hello ".repeat(300)}], max_tokens: 1});
        expect(response.status).toBe(400);
        expect((await jsonOf(response)).error.message).toMatch(/resulted in \d+ tokens/);
    });
});

describe("schemas past the grammar builder's bounds", () => {
    it("a 40,000-value enum is a 400 naming the field, not seconds of main-thread work", async () => {
        const schema = {type: "object", properties: {pick: {type: "string", enum: Array.from({length: 40_000}, (_, index) => `value-${index}`)}}, required: ["pick"]};
        const response = await server.post("/v1/chat/completions", {
            model: "tiny", messages: [{role: "user", content: "pick"}], max_tokens: 4,
            response_format: {type: "json_schema", json_schema: {name: "pick", schema}}
        });
        expect(response.status).toBe(400);
        // Refused where the body is parsed (a structured-output field holds at most 32,768 values): never rebuilt on the main thread.
        expect((await jsonOf(response)).error).toMatchObject({code: "too_many_values", param: "response_format.json_schema.schema.properties.pick.enum",
            message: expect.stringContaining("'response_format' holds more than 32,768 JSON values")});
    });
});

describe("large bodies are parsed off the main thread, with the same answers", () => {
    const big = "x".repeat(2 * 1024 * 1024);
    it("not JSON, not UTF-8, a bare value, too deep, past the limit", async () => {
        const post = (body: string | Uint8Array) => fetch(`${server.url}/v1/chat/completions`, {method: "POST", headers: {"Content-Type": "application/json"}, body});
        expect((await jsonOf(await post(`{"model": "tiny", "messages": ${big}`))).error.code).toBe("invalid_json");
        expect((await jsonOf(await post(new Uint8Array([0x7b, 0x22, 0xff, 0xfe, ...new TextEncoder().encode(big), 0x22, 0x7d])))).error.code).toBe("invalid_json");
        expect((await jsonOf(await post(JSON.stringify(big)))).error.code).toBe("invalid_json");
        const deep = `{"model": "tiny", "pad": "${big}", "messages": ${"[".repeat(200)}${"]".repeat(200)}}`;
        expect((await jsonOf(await post(deep))).error.code).toBe("json_too_deep");
        const tooLarge = await post(JSON.stringify({model: "tiny", messages: [{role: "user", content: "y".repeat(11 * 1024 * 1024)}]}));
        expect(tooLarge.status).toBe(413);
    });

    it("a valid large body is served as a small one is", async () => {
        const response = await server.post("/v1/chat/completions", {model: "tiny", messages: [{role: "user", content: "hi"}], max_tokens: 1, unknown_padding: big});
        expect(response.status).toBe(200);
    });
});
