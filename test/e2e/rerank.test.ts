import { AutoModelForSequenceClassification, AutoTokenizer, type Tensor } from "@huggingface/transformers";
import { CohereClientV2, CohereError } from "cohere-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Capability } from "../../src/capabilities/Capability.js";
import { loadCapabilities } from "../../src/capabilities/capabilities.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import { offlineTransformers } from "../../src/runtimes/onnx/offlineTransformers.js";
import { gateCapability, gateModel, openGate } from "../support/capabilities/gateCapability.js";
import { eventually } from "../support/eventually.js";
import { holdWorkers } from "../support/holdWorkers.js";
import { jsonOf, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath, tinyCrossEncoderPath, tinyRerankerGgufPath } from "../support/testModels.js";

const capabilities: readonly Capability[] = [...await loadCapabilities(), gateCapability as Capability];
const apiKey = "sk-rerank-test";
const models = [
    {id: "tiny-reranker", task: "rerank", path: tinyRerankerGgufPath, maxInputTokens: 64},
    {id: "tiny-cross-encoder", task: "rerank", path: tinyCrossEncoderPath, parallel: 1},
    gateModel(tinyChatModelPath)
];

const query = "the quick brown fox";
const documents = ["the lazy dog", "a red ball in the park", "quick brown fox jumps over the lazy dog", "hello world", "the sun and the moon", "a little girl and a cat"];
const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const health = async (server: TestServer): Promise<any> => jsonOf(await fetch(`${server.url}/health`, {headers: {Authorization: `Bearer ${apiKey}`}}));

/** The GGUF reranker's own scores: node-llama-cpp's ranking context on the same file, outside the server. */
async function llamaScores(): Promise<number[]> {
    const llama = await loadLlamaRuntime({gpu: "off"});
    const model = await llama.loadModel({modelPath: tinyRerankerGgufPath});
    const context = await model.createRankingContext({contextSize: 65, batchSize: 65, threads: 1});
    try {
        return await context.rankAll(query, documents);
    } finally {
        await context.dispose();
        await model.dispose();
    }
}

/** The cross-encoder's own scores: transformers.js on each pair alone (no batching, no padding), its logit through a sigmoid. */
async function onnxScores(): Promise<number[]> {
    offlineTransformers();
    const tokenizer = await AutoTokenizer.from_pretrained(tinyCrossEncoderPath, {local_files_only: true});
    const model = await AutoModelForSequenceClassification.from_pretrained(tinyCrossEncoderPath, {local_files_only: true, dtype: "fp32", device: "cpu"});
    try {
        const scores: number[] = [];
        for (const document of documents) {
            const {logits} = await model(tokenizer(query, {text_pair: document})) as {logits: Tensor};
            scores.push(sigmoid((logits.data as Float32Array)[0]));
        }
        return scores;
    } finally {
        await model.dispose();
    }
}

const ranked = (scores: number[]) => scores.map((score, index) => ({index, score})).sort((a, b) => b.score - a.score || a.index - b.index);

describe("/v1/rerank on a GGUF reranker and an ONNX cross-encoder", () => {
    let server: TestServer;
    const expected: Record<string, number[]> = {};
    beforeAll(async () => {
        server = await startTestServer({models, apiKey, config: {apiKeys: [apiKey], workers: 2, queueSize: 1}, capabilities});
        expected["tiny-reranker"] = await llamaScores();
        expected["tiny-cross-encoder"] = await onnxScores();
    });
    afterAll(() => server?.stop());
    const post = (target: string, body: unknown, init: RequestInit = {}) => fetch(`${server.url}${target}`, {
        method: "POST", ...init, headers: {"Content-Type": "application/json", Authorization: `Bearer ${apiKey}`}, body: JSON.stringify(body)
    });

    it("the models differ in their scores (the test can tell a wrong order), all in (0, 1)", () => {
        for (const scores of Object.values(expected)) {
            expect(new Set(scores.map((score) => score.toFixed(6))).size).toBe(documents.length);
            expect(scores.every((score) => score > 0 && score < 1)).toBe(true);
        }
    });

    for (const model of ["tiny-reranker", "tiny-cross-encoder"]) {
        it(`${model}: the cohere-ai v2 client's rerank gets the engine's own scores, best first, top_n of them`, async () => {
            const cohere = new CohereClientV2({token: apiKey, baseUrl: server.url});
            const response = await cohere.rerank({model, query, documents, topN: 4});
            const best = ranked(expected[model]).slice(0, 4);
            expect(response.results.map((result) => result.index)).toEqual(best.map((entry) => entry.index));
            response.results.forEach((result, position) => expect(result.relevanceScore).toBeCloseTo(best[position].score, 6));
            // Without top_n: every document.
            expect((await cohere.rerank({model, query, documents})).results).toHaveLength(documents.length);
        });

        it(`${model}: Jina's shape over raw HTTP at /v1/rerank, /rerank and /v2/rerank: {text} documents, return_documents, usage`, async () => {
            for (const target of ["/v1/rerank", "/rerank", "/v2/rerank"]) {
                const response = await post(target, {model, query, documents: documents.map((text) => ({text})), top_n: 2, return_documents: true});
                expect(response.status).toBe(200);
                const body = await jsonOf(response);
                const best = ranked(expected[model]).slice(0, 2);
                expect(body).toMatchObject({object: "list", model, id: expect.any(String) as unknown});
                expect(body.results.map((result: {index: number, document: {text: string}}) => [result.index, result.document])).toEqual(best.map((entry) => [entry.index, {text: documents[entry.index]}]));
                expect(body.usage.prompt_tokens).toBeGreaterThan(documents.join(" ").split(" ").length);
                expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens);
            }
            // return_documents false (the default): no document; top_n beyond the documents: all of them.
            const body = await jsonOf(await post("/v1/rerank", {model, query, documents, top_n: 100}));
            expect(body.results).toHaveLength(documents.length);
            expect(body.results.every((result: object) => !("document" in result))).toBe(true);
            // A document ranked alone scores as it does among others (no batching effect).
            const alone = await jsonOf(await post("/v1/rerank", {model, query, documents: [documents[2]]}));
            expect(alone.results[0].relevance_score).toBeCloseTo(expected[model][2], 6);
        });

        it(`${model}: a 400 names the field: documents[3], documents[1].text, top_n, documents, query; a pair too long names its document`, async () => {
            const error = async (body: unknown) => {
                const response = await post("/v1/rerank", body);
                expect(response.status).toBe(400);
                return (await jsonOf(response)).error;
            };
            expect(await error({model, query, documents: ["a", "b", "c", 4]})).toMatchObject({param: "documents[3]", type: "invalid_request_error"});
            expect(await error({model, query, documents: ["a", {text: 5}]})).toMatchObject({param: "documents[1].text"});
            expect(await error({model, query, documents: ["a"], top_n: 0})).toMatchObject({param: "top_n"});
            expect(await error({model, query, documents: ["a"], top_n: 1.5})).toMatchObject({param: "top_n"});
            expect(await error({model, query, documents: []})).toMatchObject({param: "documents"});
            expect(await error({model, documents: ["a"]})).toMatchObject({param: "query"});
            const long = "the quick brown fox jumps over the lazy dog ".repeat(10).trim();
            expect(await error({model, query, documents: ["a", "b", long]})).toMatchObject({param: "documents[2]", code: "context_length_exceeded"});
            expect(await error({model, query: long, documents: ["a"]})).toMatchObject({param: "query", code: "context_length_exceeded"});
            // The cohere client surfaces it as a 400 error.
            const thrown = await new CohereClientV2({token: apiKey, baseUrl: server.url}).rerank({model, query, documents: ["a", long]}).catch((caught: unknown) => caught);
            expect(thrown).toBeInstanceOf(CohereError);
            expect((thrown as CohereError).statusCode).toBe(400);
        });
    }

    it("a rerank model is no embeddings or chat model, and an unknown model is a 404; /v1/models lists the endpoint", async () => {
        expect((await post("/v1/embeddings", {model: "tiny-cross-encoder", input: "a"})).status).toBe(400);
        expect((await post("/v1/rerank", {model: "nope", query, documents})).status).toBe(404);
        const listed = await jsonOf(await fetch(`${server.url}/v1/models`, {headers: {Authorization: `Bearer ${apiKey}`}}));
        expect(listed.data.find((entry: {id: string}) => entry.id === "tiny-cross-encoder")).toMatchObject({task: "rerank", endpoints: ["/v1/rerank"]});
    });

    it("every rerank route needs the key", async () => {
        for (const target of ["/v1/rerank", "/rerank", "/v2/rerank"]) {
            const response = await fetch(`${server.url}${target}`, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({model: "tiny-reranker", query, documents})});
            expect(response.status).toBe(401);
        }
    });

    it("counts its requests and prompt tokens in /metrics", async () => {
        await post("/v1/rerank", {model: "tiny-cross-encoder", query, documents});
        const metrics = await (await fetch(`${server.url}/metrics`, {headers: {Authorization: `Bearer ${apiKey}`}})).text();
        expect(metrics).toMatch(/los_requests_total\{endpoint="\/v1\/rerank",model="tiny-cross-encoder",status="200"\} [1-9]/);
        expect(metrics).toMatch(/los_tokens_total\{endpoint="\/v1\/rerank",model="tiny-cross-encoder",direction="prompt"\} [1-9]/);
    });

    it("the ONNX reranker queues beyond its parallel requests and answers 503 with Retry-After beyond the queue", async () => {
        // Both workers held: the first request is admitted and its tasks wait in the pool, the second waits for admission.
        const holds = await holdWorkers(server.url, 2, {Authorization: `Bearer ${apiKey}`});
        const controllers = [new AbortController(), new AbortController()];
        const pending = controllers.map((controller) => post("/v1/rerank", {model: "tiny-cross-encoder", query, documents}, {signal: controller.signal}).catch((error: Error) => error));
        expect(await eventually(async () => {
            const state = (await health(server)).models["tiny-cross-encoder"];
            return state.busy === 1 && state.waiting === 1;
        })).toBe(true);
        const overflow = await post("/v1/rerank", {model: "tiny-cross-encoder", query, documents});
        expect(overflow.status).toBe(503);
        expect(overflow.headers.get("retry-after")).not.toBeNull();
        expect((await jsonOf(overflow)).error.code).toBe("server_overloaded");
        // The clients leave: the server lets both requests go before any of their work ran.
        controllers.forEach((controller) => controller.abort());
        await Promise.all(pending);
        expect(await eventually(async () => {
            const state = (await health(server)).models["tiny-cross-encoder"];
            return state.busy === 0 && state.waiting === 0;
        })).toBe(true);
        openGate();
        await holds.ended;
        const body = await jsonOf(await post("/v1/rerank", {model: "tiny-cross-encoder", query, documents}));
        expect(body.results).toHaveLength(documents.length);
    });
});
