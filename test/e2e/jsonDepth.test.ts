import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { maxJsonDepth } from "../../src/core/http/jsonBody.js";
import { jsonOf, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyToolsModelPath } from "../support/testModels.js";

// Any nesting depth is an answer of its own: under the bound the request is served (or refused
// for what it says), past it a 400 naming the field, never a 500 from a stack overflow somewhere.

// Bodies are built as text: JSON.stringify itself overflows the test's stack at a few thousand levels.

/** `levels` nested arrays around a number, as JSON text of depth `levels`. */
function nestedArrays(levels: number): string {
    return "[".repeat(levels) + "1" + "]".repeat(levels);
}

/** A JSON schema of `levels` nested objects, each requiring its one property `a`, as JSON text. */
function nestedSchema(levels: number): string {
    const open = '{"type":"object","required":["a"],"additionalProperties":false,"properties":{"a":';
    return open.repeat(levels) + '{"type":"string","maxLength":3}' + "}}".repeat(levels);
}

/** A chat request body with `extra` (JSON text) spliced in as its last fields. */
const chatBody = (extra: string) => `{"model":"tiny","messages":[{"role":"user","content":"Give me JSON."}],"max_tokens":4,"temperature":0,${extra}}`;

let server: TestServer;
beforeAll(async () => {
    server = await startTestServer({models: [{id: "tiny", task: "chat", path: tinyToolsModelPath, contextSize: 2048}]});
});
afterAll(() => server.stop());

describe("JSON nesting depth", () => {
    it(`accepts a body exactly ${maxJsonDepth} levels deep, refuses one level more with a 400 naming the field`, async () => {
        // The body object is level 1, so the extra field holds maxJsonDepth - 1 levels.
        const atBound = await server.post("/v1/chat/completions", chatBody(`"extra":${nestedArrays(maxJsonDepth - 1)}`));
        expect(atBound.status).toBe(200);
        const over = await server.post("/v1/chat/completions", chatBody(`"extra":${nestedArrays(maxJsonDepth)}`));
        expect(over.status).toBe(400);
        const body = await jsonOf(over);
        expect(body.error).toMatchObject({type: "invalid_request_error", param: "extra", code: "json_too_deep"});
        expect(body.error.message).toContain(String(maxJsonDepth));
    });

    it("refuses a deep top-level array with a 400 on every endpoint, without a param", async () => {
        for (const path of ["/v1/chat/completions", "/v1/embeddings", "/v1/models"]) {
            const response = await server.post(path, nestedArrays(5000));
            if (path === "/v1/models") {
                // POST to a GET route: 405 before any body is read.
                expect(response.status).toBe(405);
                continue;
            }
            expect(response.status).toBe(400);
            expect((await jsonOf(response)).error).toMatchObject({param: null, code: "json_too_deep"});
        }
    });

    // Body depth of a response_format schema of n levels: body, response_format, json_schema, schema = 4, then 2 per level.
    const schemaDepth = (levels: number) => 4 + 2 * levels;
    const underBound = Math.floor((maxJsonDepth - 4) / 2);

    it.each([1, 10, underBound - 1, underBound, underBound + 1, 100, 1500, 3000])(
        "response_format json_schema nested %i levels: served or a 400, never a 500", async (levels) => {
            const response = await server.post("/v1/chat/completions",
                chatBody(`"response_format":{"type":"json_schema","json_schema":{"name":"deep","schema":${nestedSchema(levels)}}}`));
            const body = await jsonOf(response);
            if (schemaDepth(levels) <= maxJsonDepth) {
                expect(response.status, JSON.stringify(body)).toBe(200);
                expect(body.choices[0].finish_reason).toBe("length");
            } else {
                expect(response.status).toBe(400);
                expect(body.error).toMatchObject({type: "invalid_request_error", param: "response_format", code: "json_too_deep"});
            }
        });

    // tools[0].function.parameters: body, tools, [0], function, parameters = 5, then 2 per level.
    // The tools are rendered into the prompt, so deep ones may also be too long for the context: a 400 of its own.
    it.each([1, 20, 61, 62, 1500, 3000])("tool parameters nested %i levels: served or a 400 naming tools, never a 500", async (levels) => {
        const response = await server.post("/v1/chat/completions",
            chatBody(`"tool_choice":"required","tools":[{"type":"function","function":{"name":"deep","parameters":${nestedSchema(levels)}}}]`));
        const body = await jsonOf(response);
        if (5 + 2 * levels <= maxJsonDepth) {
            if (response.status !== 200)
                expect(body.error, JSON.stringify(body)).toMatchObject({code: "context_length_exceeded"});
        } else {
            expect(response.status).toBe(400);
            expect(body.error).toMatchObject({param: "tools", code: "json_too_deep"});
        }
    });

    it("the server is healthy afterwards, with no busy sequence", async () => {
        const health = await jsonOf(await fetch(`${server.url}/health`));
        expect(health.status).toBe("ok");
        expect(health.models.tiny.busy).toBe(0);
    });
});
