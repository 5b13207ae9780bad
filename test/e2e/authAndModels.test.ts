import { afterAll, beforeAll, describe, expect, it } from "vitest";
import OpenAI from "openai";
import { runKeysCli } from "../../src/auth/keysCli.js";
import { eventually } from "../support/eventually.js";
import { jsonOf, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyBertPath, tinyChatModelPath, tinyPlainModelPath } from "../support/testModels.js";

const models = [
    {id: "tiny-2024", task: "chat", path: tinyChatModelPath, family: "tiny", released: "2024-05-01", aliases: ["gpt-4o-mini"], contextSize: 128, parallel: 1},
    {id: "tiny-2023", task: "chat", path: tinyPlainModelPath, family: "tiny", released: "2023-01-01", aliases: ["gpt-3.5-turbo"], contextSize: 128, parallel: 1},
    {id: "tiny-embed", task: "embeddings", path: tinyBertPath}
];

describe("API keys", () => {
    let server: TestServer;
    beforeAll(async () => {
        server = await startTestServer({models, config: {apiKeys: ["sk-env-key-1", "sk-env-key-2"]}, apiKey: "sk-env-key-2"});
    });
    afterAll(() => server.stop());

    it("accepts a configured key through the official client", async () => {
        const list = await server.client.models.list();
        expect(list.data.length).toBeGreaterThan(0);
    });

    it("rejects a missing, malformed or wrong key with 401 invalid_api_key, on every /v1 path", async () => {
        for (const [headers, path] of [
            [{}, "/v1/models"],
            [{Authorization: "sk-env-key-1"}, "/v1/models"],
            [{Authorization: "Bearer sk-env-key-3"}, "/v1/models"],
            [{Authorization: "Bearer sk-env-key-1x"}, "/v1/models/tiny-2024"],
            [{Authorization: "Bearer "}, "/v1/does-not-exist"]
        ] as [Record<string, string>, string][]) {
            const response = await fetch(`${server.url}${path}`, {headers});
            expect(response.status, JSON.stringify(headers)).toBe(401);
            const body = await jsonOf(response);
            expect(body.error.code).toBe("invalid_api_key");
            expect(body.error.type).toBe("invalid_request_error");
            expect(JSON.stringify(body)).not.toContain("sk-env-key-1\"");
        }
        const error = await new OpenAI({baseURL: `${server.url}/v1`, apiKey: "wrong", maxRetries: 0}).models.list().catch((caught) => caught);
        expect(error.constructor.name).toBe("AuthenticationError");
    });

    it("checks auth before parsing the body", async () => {
        const response = await fetch(`${server.url}/v1/chat/completions`, {method: "POST", body: "{not json"});
        expect(response.status).toBe(401);
    });

    it("leaves /health open", async () => {
        expect((await fetch(`${server.url}/health`)).status).toBe(200);
    });

    it("accepts keys added with the keys CLI and stops accepting them once revoked, without a restart", async () => {
        const out: string[] = [];
        const io = {stdout: (text: string) => out.push(text), stderr: (text: string) => out.push(text)};
        expect(await runKeysCli(["--file", `${server.dir}/api-keys.json`, "add", "laptop"], io)).toBe(0);
        const key = /sk-local-[A-Za-z0-9_-]{43}/.exec(out.join(""))![0];
        const client = new OpenAI({baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 0});
        // The store looks at the file about once a second: wait until the server answers the new key (a state that,
        // once reached, stays), not for a time.
        const status = () => fetch(`${server.url}/v1/models`, {headers: {Authorization: `Bearer ${key}`}}).then((response) => response.status);
        expect(await eventually(async () => await status() === 200, 300, 20)).toBe(true);
        expect((await client.models.list()).data.length).toBeGreaterThan(0);

        expect(await runKeysCli(["--file", `${server.dir}/api-keys.json`, "revoke", "laptop"], io)).toBe(0);
        expect(await eventually(async () => await status() === 401, 300, 20)).toBe(true);
        const error = await client.models.list().catch((caught) => caught);
        expect(error.status).toBe(401);
    });
});

describe("/v1/models and name resolution", () => {
    let server: TestServer;
    beforeAll(async () => {
        server = await startTestServer({models});
    });
    afterAll(() => server.stop());

    it("lists the served models in OpenAI's shape with endpoints and aliases", async () => {
        const response = await fetch(`${server.url}/v1/models`);
        expect(response.status).toBe(200);
        const body = await jsonOf(response);
        expect(body.object).toBe("list");
        expect(body.data.map((model: {id: string}) => model.id)).toEqual(["tiny-2024", "tiny-2023", "tiny-embed"]);
        expect(body.data[2]).toMatchObject({id: "tiny-embed", task: "embeddings", endpoints: ["/v1/embeddings"]});
        expect(body.data[0]).toEqual({
            id: "tiny-2024", object: "model", created: Date.UTC(2024, 4, 1) / 1000, owned_by: "local",
            task: "chat", endpoints: ["/v1/chat/completions", "/v1/completions", "/v1/responses", "/v1/messages", "/v1/tokenize", "/v1/detokenize", "/v1/decisions", "/v1/systemone"], aliases: ["gpt-4o-mini", "tiny-latest"], family: "tiny",
            // A GGUF chat model takes text only (OpenRouter's field; docs/models.md "Which models take images").
            architecture: {modality: "text->text", input_modalities: ["text"], output_modalities: ["text"]},
            // Loaded at start (startTestServer preloads) and kept: its estimate (in RAM; none in VRAM on the CPU) and what loading it added to the RSS.
            status: {value: "loaded", estimated_bytes: expect.any(Number), estimated_vram_bytes: 0, measured_bytes: expect.any(Number), last_used: null, keep_alive: "forever", pinned: false, preload: true,
                // The manifest's context, and the file's own.
                context_size: 128, train_context_size: expect.any(Number)}
        });
        expect(body.data[1].aliases).toEqual(["gpt-3.5-turbo"]);
    });

    it("retrieves a model by id or alias, answering with the concrete id", async () => {
        expect((await server.client.models.retrieve("tiny-2023")).id).toBe("tiny-2023");
        expect((await server.client.models.retrieve("gpt-4o-mini")).id).toBe("tiny-2024");
        expect((await server.client.models.retrieve("tiny-latest")).id).toBe("tiny-2024");
    });

    it("answers 404 model_not_found for an unknown model", async () => {
        const response = await fetch(`${server.url}/v1/models/nope`);
        expect(response.status).toBe(404);
        expect((await jsonOf(response)).error.code).toBe("model_not_found");
        const error = await server.client.models.retrieve("nope").catch((caught) => caught);
        expect(error.constructor.name).toBe("NotFoundError");
    });

    it("family-latest picks the newest release for chat, and the response names the concrete variant", async () => {
        const completion = await server.client.chat.completions.create({model: "tiny-latest", messages: [{role: "user", content: "hi"}], max_tokens: 1});
        expect(completion.model).toBe("tiny-2024");
        const older = await server.client.chat.completions.create({model: "gpt-3.5-turbo", messages: [{role: "user", content: "hi"}], max_tokens: 1});
        expect(older.model).toBe("tiny-2023");
    });

    it("a model of another task is a 400 naming its endpoint", async () => {
        const response = await server.post("/v1/chat/completions", {model: "tiny-embed", messages: [{role: "user", content: "hi"}]});
        expect(response.status).toBe(400);
        const body = await jsonOf(response);
        expect(body.error.param).toBe("model");
        expect(body.error.message).toContain("/v1/embeddings");
    });
});
