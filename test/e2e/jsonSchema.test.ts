import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";
import { createAjv } from "../../src/core/validation/createAjv.js";
import { readSse, startTestServer, type TestServer } from "../support/startTestServer.js";
import { storiesModelPath, tinyChatModelPath } from "../support/testModels.js";

// response_format json_schema: the output is constrained by the schema's grammar. Random-weight
// models produce whatever the grammar lets through, which is exactly what is being tested.
// One thing they do that real models do not: write random byte-fallback tokens that form invalid
// UTF-8, which reads back as U+FFFD per byte and breaks string lengths. Those tokens are banned.

/** logit_bias banning every byte-fallback token (`<0xNN>`) of a model. */
async function banByteTokens(modelPath: string) {
    const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
    const model = await llama.loadModel({modelPath, vocabOnly: true});
    const tokens = model.fileInfo.metadata.tokenizer.ggml.tokens as string[];
    await model.dispose();
    return Object.fromEntries(tokens.flatMap((text, id) => /^<0x[0-9A-F]{2}>$/.test(text) ? [[String(id), -100]] : []));
}
const schema = {
    type: "object",
    properties: {
        count: {type: "integer"},
        ratio: {type: "number"},
        label: {type: "string", maxLength: 12},
        tags: {type: "array", items: {enum: ["red", "green", "blue"]}, maxItems: 3},
        done: {type: "boolean"},
        when: {type: "string", format: "date"},
        note: {anyOf: [{type: "string", maxLength: 8}, {type: "null"}]}
    },
    required: ["count", "ratio", "label", "tags", "done", "when", "note"],
    additionalProperties: false
};

describe("response_format json_schema", () => {
    let server: TestServer;
    const validate = createAjv().compile(schema);
    beforeAll(async () => {
        server = await startTestServer({
            models: [
                {id: "tiny", task: "chat", path: tinyChatModelPath, contextSize: 1024, parallel: 2},
                ...[{id: "stories", task: "chat", path: storiesModelPath, contextSize: 1024, parallel: 2}]
            ]
        });
    });
    afterAll(() => server.stop());

    const models: [string, string][] = [["tiny", tinyChatModelPath], ...[["stories", storiesModelPath] as [string, string]]];

    it.each(models)("%s: over many seeds every finished answer validates, integers are integral", async (model, modelPath) => {
        const logit_bias = await banByteTokens(modelPath);
        let finished = 0;
        for (let seed = 0; seed < 15; seed++) {
            const completion = await server.client.chat.completions.create({
                model, seed, temperature: 1, max_tokens: 200, n: 2, logit_bias,
                response_format: {type: "json_schema", json_schema: {name: "record", schema, strict: true}},
                messages: [{role: "user", content: "Give me a record."}]
            });
            for (const choice of completion.choices) {
                if (choice.finish_reason !== "stop")
                    continue;
                finished++;
                const value = JSON.parse(choice.message.content!);
                expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
                expect(Number.isInteger(value.count)).toBe(true);
                expect(Number.isFinite(value.ratio)).toBe(true);
                expect(choice.message.content).not.toMatch(/\n\s*$/);
            }
        }
        expect(finished).toBeGreaterThanOrEqual(10);
    }, 120_000);

    it("streams the same text as the non-streamed answer", async () => {
        const body = {
            model: "tiny", seed: 3, temperature: 1, max_tokens: 200,
            response_format: {type: "json_schema", json_schema: {name: "record", schema}},
            messages: [{role: "user", content: "Give me a record."}]
        };
        const {events} = await readSse(await server.post("/v1/chat/completions", {...body, stream: true}));
        const text = events.slice(0, -1).map((event) => JSON.parse(event.data).choices[0]?.delta?.content ?? "").join("");
        const whole = await server.client.chat.completions.create(body as never);
        expect(text).toBe((whole as {choices: {message: {content: string}}[]}).choices[0].message.content);
    });

    it("a $ref to a missing definition is a 400 naming it, and holds no sequence", async () => {
        const response = await server.post("/v1/chat/completions", {
            model: "tiny", max_tokens: 5, messages: [{role: "user", content: "x"}],
            response_format: {type: "json_schema", json_schema: {name: "r", schema: {type: "object", properties: {a: {$ref: "#/$defs/missing"}}}}}
        });
        expect(response.status).toBe(400);
        const body = await response.json() as {error: {code: string, param: string}};
        expect(body.error.code).toBe("invalid_json_schema");
        expect(body.error.param).toBe("response_format.json_schema.schema.properties.a.$ref");
        const health = await (await fetch(`${server.url}/health`)).json() as {models: Record<string, {busy: number}>};
        expect(health.models.tiny.busy).toBe(0);
    });

    it("a top-level non-object schema works too", async () => {
        const completion = await server.client.chat.completions.create({
            model: "tiny", seed: 1, temperature: 1, max_tokens: 40,
            response_format: {type: "json_schema", json_schema: {name: "n", schema: {type: "array", items: {type: "integer"}, maxItems: 4}}},
            messages: [{role: "user", content: "numbers"}]
        });
        const content = completion.choices[0].message.content!;
        if (completion.choices[0].finish_reason === "stop") {
            const value = JSON.parse(content);
            expect(Array.isArray(value)).toBe(true);
            expect(value.every(Number.isInteger)).toBe(true);
        } else
            expect(content.startsWith("[")).toBe(true);
    });
});
