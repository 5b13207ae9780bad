import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { base64ToFloat32 } from "../../src/capabilities/embeddings/embeddingsResponse.js";
import { testBertVocabulary } from "../support/onnx/makeTestBertOnnx.js";
import type { Capability } from "../../src/capabilities/Capability.js";
import { loadCapabilities } from "../../src/capabilities/capabilities.js";
import { gateCapability, gateModel, openGate } from "../support/capabilities/gateCapability.js";
import { eventually } from "../support/eventually.js";
import { holdWorkers } from "../support/holdWorkers.js";
import { gatedServerEntry, spawnServer } from "../support/spawnServer.js";
import { jsonOf, startTestServer, type TestServer } from "../support/startTestServer.js";
import { storiesModelPath, tinyBertPath, tinyChatModelPath } from "../support/testModels.js";

const capabilities = await loadCapabilities();

const vocabulary = testBertVocabulary();
const idOf = (token: string) => {
    const id = vocabulary.indexOf(token);
    if (id < 0) throw new Error(`no token ${token}`);
    return id;
};
/** What the test tokenizer makes of lowercase words from its vocabulary: [CLS] words [SEP]. */
const idsOf = (text: string) => [idOf("[CLS]"), ...text.split(" ").map(idOf), idOf("[SEP]")];

const withGate: readonly Capability[] = [...capabilities, gateCapability as Capability];
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const health = async (server: {url: string}): Promise<any> => jsonOf(await fetch(`${server.url}/health`));

const norm = (vector: ArrayLike<number>) => Math.hypot(...Array.from(vector));
const texts = Array.from({length: 40}, (_, index) => `the ${["cat", "dog", "fox", "girl", "boy"][index % 5]} was ${index} ${"little ".repeat(index % 7)}time`);

const models = [
    {id: "tiny-bert", task: "embeddings", path: tinyBertPath, aliases: ["text-embedding-ada-002"]},
    {id: "tiny-bert-mrl", task: "embeddings", path: tinyBertPath, matryoshka: true, maxInputTokens: 16},
    {id: "tiny-bert-mrl-list", task: "embeddings", path: tinyBertPath, matryoshka: [8, 16], pooling: "cls"},
    {id: "tiny-bert-raw", task: "embeddings", path: tinyBertPath, normalize: false, dtype: "fp32"},
    {id: "tiny-chat", task: "chat", path: tinyChatModelPath, contextSize: 128, parallel: 1}
];

// The two describes below use the same server (these models, the gate, 2 workers): one for both. Every test there leaves
// the pool as it found it (its holds released, its requests ended).
describe("one server with the ONNX models, a chat model and the gate", () => {
    let server: TestServer;
    beforeAll(async () => {
        server = await startTestServer({models: [...models, gateModel(tinyChatModelPath)], config: {workers: 2}, capabilities: withGate});
    });
    afterAll(() => server?.stop());

    describe("embeddings load does not starve chat streaming", () => {
        it("a chat stream runs to the end while a large embeddings request holds the pool, and both finish", async () => {
            // Both workers held: the embeddings request is admitted and its tasks wait in the pool, so it cannot
            // finish before the chat stream whatever the machine's speed.
            const holds = await holdWorkers(server.url, 2);
            let embeddingsDone = false;
            const bigInput = Array.from({length: 2048}, (_, index) => `${texts[index % texts.length]} ${index}`);
            const embedding = server.post("/v1/embeddings", {model: "tiny-bert", input: bigInput}).then(async (response) => {
                embeddingsDone = true;
                return {status: response.status, body: await jsonOf(response)};
            });
            expect(await eventually(async () => (await health(server)).models["tiny-bert"].busy === 1)).toBe(true);
            const stream = await server.client.chat.completions.create({
                model: "tiny-chat", messages: [{role: "user", content: "hi"}], max_tokens: 24, stream: true, seed: 1
            });
            let chunks = 0;
            for await (const chunk of stream) {
                if (!chunk.choices[0]?.delta?.content)
                    continue;
                if (chunks++ === 0) {
                    // The first tokens came while the embeddings request waited; from here on the pool works on it
                    // and the rest of the stream competes with it for the CPU.
                    expect(embeddingsDone).toBe(false);
                    openGate();
                }
            }
            expect(chunks).toBeGreaterThan(0);
            const {status, body} = await embedding;
            expect(status).toBe(200);
            expect(body.data).toHaveLength(2048);
            await holds.ended;
        });
    });

    describe("/v1/embeddings with an ONNX model in the worker pool", () => {
        const embed = async (body: Record<string, unknown>) => {
            const response = await server.post("/v1/embeddings", {model: "tiny-bert", ...body});
            expect(response.status, await response.clone().text()).toBe(200);
            return jsonOf(response);
        };
        const floats = async (input: unknown, model = "tiny-bert", extra: Record<string, unknown> = {}) =>
            (await embed({input, model, ...extra})).data.map((item: {embedding: number[]}) => item.embedding) as number[][];

        it("answers a string in OpenAI's shape with the concrete model id and real token counts", async () => {
            const body = await embed({input: "hello world", model: "text-embedding-ada-002"});
            expect(Object.keys(body).sort()).toEqual(["data", "model", "object", "usage"]);
            expect(body.object).toBe("list");
            expect(body.model).toBe("tiny-bert");
            expect(body.usage).toEqual({prompt_tokens: 4, total_tokens: 4});
            expect(body.data).toHaveLength(1);
            expect(body.data[0].object).toBe("embedding");
            expect(body.data[0].index).toBe(0);
            expect(body.data[0].embedding).toHaveLength(32);
            expect(norm(body.data[0].embedding)).toBeCloseTo(1, 5);
        });

        it("the official client works for every input form (it asks for base64 and decodes it)", async () => {
            const forms: [unknown, number][] = [
                ["hello world", 1],
                [["hello world", "the quick brown fox"], 2],
                [idsOf("hello world"), 1],
                [[idsOf("hello world"), idsOf("the lazy dog")], 2]
            ];
            const reference = (await floats("hello world"))[0];
            for (const [input, count] of forms) {
                const result = await server.client.embeddings.create({model: "text-embedding-ada-002", input: input as string});
                expect(result.model).toBe("tiny-bert");
                expect(result.data).toHaveLength(count);
                for (const [index, item] of result.data.entries()) {
                    expect(item.index).toBe(index);
                    expect(item.embedding).toHaveLength(32);
                    expect(norm(item.embedding)).toBeCloseTo(1, 5);
                }
                // Text and token ids of the same tokens give the same vector, bit for bit through base64.
                expect(result.data[0].embedding).toEqual(reference);
            }
        });

        it("the client's explicit float and base64 formats carry identical vectors", async () => {
            const asFloat = await server.client.embeddings.create({model: "tiny-bert", input: texts.slice(0, 5), encoding_format: "float"});
            const asBase64 = await server.client.embeddings.create({model: "tiny-bert", input: texts.slice(0, 5), encoding_format: "base64"});
            // Asked for base64 explicitly, the client hands over the string; decoded it is the float vector.
            expect(asBase64.data.map((item) => Array.from(base64ToFloat32(item.embedding as unknown as string)))).toEqual(asFloat.data.map((item) => item.embedding));
            expect(asFloat.usage.prompt_tokens).toBeGreaterThan(5 * 4);
        });

        it("base64 on the wire is little-endian float32, 4 bytes per dimension", async () => {
            const body = await embed({input: ["hello world", "the cat"], encoding_format: "base64"});
            const plain = await floats(["hello world", "the cat"]);
            for (const [index, item] of body.data.entries()) {
                expect(typeof item.embedding).toBe("string");
                expect(Buffer.from(item.embedding, "base64").length).toBe(32 * 4);
                expect(Array.from(base64ToFloat32(item.embedding))).toEqual(plain[index]);
            }
        });

        it("is deterministic, and a batch equals its inputs one by one", async () => {
            const batch = await floats(texts);
            expect(await floats(texts)).toEqual(batch);
            for (const index of [0, 7, 13, 39]) {
                const [single] = await floats(texts[index]);
                single.forEach((value, dimension) => expect(value).toBeCloseTo(batch[index][dimension], 6));
            }
            // Different texts, different vectors.
            expect(batch[0]).not.toEqual(batch[1]);
        });

        it("token ids go to the model as given and count as tokens", async () => {
            const ids = idsOf("the quick brown fox");
            const body = await embed({input: ids});
            expect(body.usage.prompt_tokens).toBe(ids.length);
            expect(body.data[0].embedding).toEqual((await floats("The Quick brown FOX"))[0]);
            // Without [CLS]/[SEP] it is a different input.
            expect((await floats(ids.slice(1, -1)))[0]).not.toEqual(body.data[0].embedding);
        });

        it("2048 inputs in one request run in the pool and keep their order", async () => {
            const many = Array.from({length: 2048}, (_, index) => texts[index % texts.length]);
            const body = await embed({input: many});
            expect(body.data).toHaveLength(2048);
            const reference = await floats(texts);
            for (const index of [0, 1, 39, 40, 1000, 2047]) {
                expect(body.data[index].index).toBe(index);
                body.data[index].embedding.forEach((value: number, dimension: number) => expect(value).toBeCloseTo(reference[index % texts.length][dimension], 6));
            }
        });

        it("dimensions truncates and re-normalises for a Matryoshka model", async () => {
            const [full] = await floats("hello world", "tiny-bert-mrl");
            const [short] = await floats("hello world", "tiny-bert-mrl", {dimensions: 8});
            expect(short).toHaveLength(8);
            expect(norm(short)).toBeCloseTo(1, 5);
            const prefixNorm = norm(full.slice(0, 8));
            short.forEach((value, index) => expect(value).toBeCloseTo(full[index] / prefixNorm, 6));
            expect(await floats("hello world", "tiny-bert-mrl", {dimensions: 32})).toEqual([full]);
            const viaClient = await server.client.embeddings.create({model: "tiny-bert-mrl", input: "hello world", dimensions: 5});
            expect(viaClient.data[0].embedding).toHaveLength(5);
            const listed = await floats("hello world", "tiny-bert-mrl-list", {dimensions: 16});
            expect(listed[0]).toHaveLength(16);
        });

        it("pooling and normalisation follow the manifest", async () => {
            const [raw] = await floats("hello world", "tiny-bert-raw");
            const [normalised] = await floats("hello world");
            expect(norm(raw)).not.toBeCloseTo(1, 3);
            raw.forEach((value, index) => expect(value / norm(raw)).toBeCloseTo(normalised[index], 6));
            const [cls] = await floats("hello world", "tiny-bert-mrl-list");
            expect(norm(cls)).toBeCloseTo(1, 5);
            expect(cls).not.toEqual(normalised);
        });

        const long = "the ".repeat(70).trim();
        const badRequests: [string, Record<string, unknown>, string | null, string?][] = [
            ["missing input", {input: undefined}, "input"],
            ["input a number", {input: 5}, "input"],
            ["input an object", {input: {text: "x"}}, "input"],
            ["empty string", {input: ""}, "input"],
            ["empty array", {input: []}, "input"],
            ["an empty string in the array", {input: ["a", ""]}, "input[1]"],
            ["2049 strings", {input: Array.from({length: 2049}, () => "a")}, "input"],
            ["2049 token arrays", {input: Array.from({length: 2049}, () => [5])}, "input"],
            ["a number among strings", {input: ["a", 5]}, "input[1]"],
            ["a string among token ids", {input: [5, "a"]}, "input[1]"],
            ["a null item", {input: [null]}, "input[0]"],
            ["an empty token array", {input: [[5], []]}, "input[1]"],
            ["a token id outside the vocabulary", {input: [[5], [2, 116]]}, "input[1][1]"],
            ["a token id outside the vocabulary (flat)", {input: [2, 100000]}, "input[1]"],
            ["a negative token id", {input: [[2, -1]]}, "input[0][1]"],
            ["a fractional token id", {input: [2, 1.5]}, "input[1]"],
            ["a text over the model's limit", {input: ["hello", long]}, "input[1]", "context_length_exceeded"],
            ["a single text over the limit", {input: long}, "input", "context_length_exceeded"],
            ["token ids over the limit", {input: [[2], Array.from({length: 65}, () => 5)]}, "input[1]", "context_length_exceeded"],
            ["a text over a manifest limit", {model: "tiny-bert-mrl", input: ["the ".repeat(15)]}, "input[0]", "context_length_exceeded"],
            ["dimensions for a model without Matryoshka", {dimensions: 16}, "dimensions", "unsupported_parameter"],
            ["dimensions 0", {model: "tiny-bert-mrl", dimensions: 0}, "dimensions"],
            ["dimensions above the model's", {model: "tiny-bert-mrl", dimensions: 33}, "dimensions"],
            ["dimensions not in the model's list", {model: "tiny-bert-mrl-list", dimensions: 12}, "dimensions"],
            ["dimensions fractional", {model: "tiny-bert-mrl", dimensions: 1.5}, "dimensions"],
            ["unknown encoding_format", {encoding_format: "hex"}, "encoding_format"],
            ["a chat model", {model: "tiny-chat"}, "model", "model_not_supported"]
        ];

        it.each(badRequests)("%s is a 400 naming the field", async (_name, fields, param, code) => {
            const response = await server.post("/v1/embeddings", {model: "tiny-bert", input: "hello", ...fields});
            expect(response.status).toBe(400);
            const body = await jsonOf(response);
            expect(Object.keys(body)).toEqual(["error"]);
            expect(body.error.type).toBe("invalid_request_error");
            expect(body.error.param).toBe(param);
            expect(body.error.message.length).toBeGreaterThan(10);
            if (code != null)
                expect(body.error.code).toBe(code);
        });

        it("accepts nulls for optional fields and ignores unknown ones", async () => {
            const body = await embed({input: "hello", encoding_format: null, dimensions: null, user: null, something_new: 1});
            expect(body.data[0].embedding).toHaveLength(32);
        });

        it("the official client surfaces a too-long input as BadRequestError naming its index", async () => {
            const error = await server.client.embeddings.create({model: "tiny-bert", input: ["hello", "world", long]}).catch((caught) => caught);
            expect(error.constructor.name).toBe("BadRequestError");
            expect(error.param).toBe("input[2]");
            expect(error.message).toContain("64");
        });

        it("an unknown model is a 404", async () => {
            const response = await server.post("/v1/embeddings", {model: "text-embedding-3-large", input: "x"});
            expect(response.status).toBe(404);
            expect((await jsonOf(response)).error.code).toBe("model_not_found");
        });

        it("lists the embeddings models with their endpoint and reports them in /health", async () => {
            const list = await server.client.models.list();
            const model = list.data.find((item) => item.id === "tiny-bert") as unknown as {endpoints: string[], aliases: string[]};
            expect(model.endpoints).toEqual(["/v1/embeddings"]);
            expect(model.aliases).toEqual(["text-embedding-ada-002"]);
            const health = await jsonOf(await fetch(`${server.url}/health`));
            expect(health.models["tiny-bert"]).toEqual({parallel: 4, busy: 0, waiting: 0});
        });

        it("a cancelled request leaves the server alive and healthy, its waiting work dropped", async () => {
            const many = Array.from({length: 2048}, (_, index) => `${texts[index % 40]} ${"moon ".repeat(index % 50)}`);
            for (let round = 0; round < 3; round++) {
                // The request is admitted and its tasks wait behind two held workers when the client goes away.
                const holds = await holdWorkers(server.url, 2);
                const controller = new AbortController();
                const pending = server.post("/v1/embeddings", {model: "tiny-bert", input: many}, {signal: controller.signal});
                expect(await eventually(async () => (await health(server)).models["tiny-bert"].busy === 1)).toBe(true);
                controller.abort();
                await expect(pending).rejects.toThrow();
                // The server sees the disconnect and lets the request go before any of its work ran.
                expect(await eventually(async () => (await health(server)).models["tiny-bert"].busy === 0)).toBe(true);
                openGate();
                await holds.ended;
            }
            expect((await fetch(`${server.url}/health`)).status).toBe(200);
            const [vector] = await floats("hello world");
            expect(vector).toEqual((await floats("hello world"))[0]);
            expect((await health(server)).models["tiny-bert"]).toEqual({parallel: 4, busy: 0, waiting: 0});
        });

        it("a request cancelled while its batches run drains them and frees the pool", async () => {
            // One worker held, one free: the request's tasks start on the free worker. The client leaves while
            // the request is admitted; whatever batch runs then finishes (a worker is never killed mid-run).
            const holds = await holdWorkers(server.url, 1);
            const many = Array.from({length: 2048}, (_, index) => `${texts[index % 40]} ${"star ".repeat(index % 50)}`);
            const controller = new AbortController();
            const pending = server.post("/v1/embeddings", {model: "tiny-bert", input: many}, {signal: controller.signal}).catch((error) => error);
            expect(await eventually(async () => (await health(server)).models["tiny-bert"].busy === 1)).toBe(true);
            controller.abort();
            await pending;
            openGate();
            await holds.ended;
            expect(await eventually(async () => (await health(server)).models["tiny-bert"].busy === 0)).toBe(true);
            expect((await floats("hello world"))[0]).toHaveLength(32);
        });
    });
});

describe("shutdown under embeddings load", () => {
    it("finishes the requests in flight (their work waiting in the pool), then closes cleanly", async () => {
        const server = await startTestServer({models: [models[0], gateModel(tinyChatModelPath)], config: {workers: 2}, capabilities: withGate});
        const holds = await holdWorkers(server.url, 2);
        const many = Array.from({length: 1024}, (_, index) => `${texts[index % 40]} ${"tree ".repeat(index % 50)}`);
        const requests = Array.from({length: 4}, () => server.post("/v1/embeddings", {model: "tiny-bert", input: many}).then(
            async (response) => ({status: response.status, count: (await jsonOf(response)).data?.length})));
        expect(await eventually(async () => (await health(server)).models["tiny-bert"].busy === 4)).toBe(true);
        const stopped = server.stop();
        // Shutdown has begun with all four requests admitted and none of their work run yet.
        openGate();
        await stopped;
        expect(await Promise.all(requests)).toEqual(Array(4).fill({status: 200, count: 1024}));
        await holds.ended;
        expect(process.exitCode ?? 0).toBe(0);
    });
});

describe("the server process under embeddings load", () => {
    it("on SIGTERM finishes the admitted requests, drains the worker pool and exits 0 (never 134)", async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "los-embed-"));
        try {
            const manifest = path.join(dir, "models.json");
            fs.writeFileSync(manifest, JSON.stringify({models: [models[0], gateModel(tinyChatModelPath)]}));
            const server = await spawnServer(["--models", manifest, "--workers", "2"], {LOG_LEVEL: "info"}, gatedServerEntry);
            const holds = await holdWorkers(server.url, 2);
            const many = Array.from({length: 1024}, (_, index) => `${texts[index % 40]} ${"house ".repeat(index % 50)}`);
            const requests = Array.from({length: 3}, () => fetch(`${server.url}/v1/embeddings`, {
                method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({model: "tiny-bert", input: many})
            }).then((response) => response.status, () => "failed"));
            expect(await eventually(async () => (await health(server)).models["tiny-bert"].busy === 3)).toBe(true);
            server.child.kill("SIGTERM");
            // The gate opens only once the server is shutting down: the ONNX work runs during the drain.
            expect(await eventually(() => server.output().includes("SIGTERM: shutting down"))).toBe(true);
            server.child.kill("SIGUSR2");
            expect(await server.exited, server.output()).toBe(0);
            expect(await Promise.all(requests)).toEqual([200, 200, 200]);
            await holds.ended;
        } finally {
            fs.rmSync(dir, {recursive: true, force: true});
        }
        // A bound for a spawned server beside other test files, not a measurement (21 s alone on a loaded machine).
    }, 90_000);
});

describe("a GGUF embeddings model on node-llama-cpp (stories260K)", () => {
    let server: TestServer;
    beforeAll(async () => {
        server = await startTestServer({models: [
            {id: "stories-embed", task: "embeddings", path: storiesModelPath, maxInputTokens: 32, aliases: ["text-embedding-3-small"]},
            {id: "stories-embed-mrl", task: "embeddings", path: storiesModelPath, matryoshka: true}
        ]});
    });
    afterAll(() => server?.stop());

    it("serves every input form through the official client with unit vectors and real token counts", async () => {
        const text = await server.client.embeddings.create({model: "text-embedding-3-small", input: ["Once upon a time", "Lily"]});
        expect(text.model).toBe("stories-embed");
        expect(text.data).toHaveLength(2);
        for (const item of text.data)
            expect(norm(item.embedding)).toBeCloseTo(1, 5);
        expect(text.usage.prompt_tokens).toBeGreaterThan(2);
        const again = await server.client.embeddings.create({model: "stories-embed", input: "Once upon a time", encoding_format: "float"});
        expect(again.data[0].embedding).toEqual(text.data[0].embedding);
        const ids = await server.client.embeddings.create({model: "stories-embed", input: [[1, 50, 60], [70]]});
        expect(ids.data).toHaveLength(2);
        const flat = await server.client.embeddings.create({model: "stories-embed", input: [1, 50, 60]});
        expect(flat.data[0].embedding).toEqual(ids.data[0].embedding);
    });

    it("applies the same limits: too long, out-of-vocabulary ids, dimensions", async () => {
        const tooLong = await server.post("/v1/embeddings", {model: "stories-embed", input: ["hi", "Once upon a time ".repeat(20)]});
        expect(tooLong.status).toBe(400);
        expect((await jsonOf(tooLong)).error.param).toBe("input[1]");
        const badId = await server.post("/v1/embeddings", {model: "stories-embed", input: [[1, 999999]]});
        expect((await jsonOf(badId)).error.param).toBe("input[0][1]");
        const dims = await server.post("/v1/embeddings", {model: "stories-embed", input: "x", dimensions: 4});
        expect((await jsonOf(dims)).error.code).toBe("unsupported_parameter");
        const short = await server.client.embeddings.create({model: "stories-embed-mrl", input: "Lily", dimensions: 16});
        expect(short.data[0].embedding).toHaveLength(16);
        expect(norm(short.data[0].embedding)).toBeCloseTo(1, 5);
    });
});
