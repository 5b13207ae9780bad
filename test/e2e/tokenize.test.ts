import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { holdOffThreadWork } from "../../src/core/workers/offThreadGate.js";
import { eventually } from "../support/eventually.js";
import { testLlamaTokens } from "../support/gguf/makeTestLlamaGguf.js";
import { realTemplateModels } from "../support/realTemplateModels.js";
import { rawRequest } from "../support/rawRequest.js";
import { jsonOf, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath } from "../support/testModels.js";

// /v1/tokenize and /v1/detokenize (and llama-server's /tokenize, /detokenize) on generated SentencePiece models whose
// vocabulary is known (makeTestLlamaGguf): control tokens at fixed ids, `<0xNN>` byte tokens from id 5, words as
// `▁word` pieces. The conversation case renders Qwen3's real chat template (test/fixtures/templates).
const {bos, imStart, imEnd, firstByte} = testLlamaTokens;
const space = 261; // `▁` alone, the first normal piece after the 256 byte tokens
const hello = 942; // `▁Hello`
const world = 565; // `▁world`
const qwen3 = realTemplateModels.find((model) => model.id === "qwen3")!;
const hi = [{role: "user", content: "hi"}];

describe("/v1/tokenize and /v1/detokenize", () => {
    let server: TestServer;
    beforeAll(async () => {
        server = await startTestServer({
            models: [
                {id: "tiny", task: "chat", path: tinyChatModelPath, contextSize: 4096, parallel: 1},
                {id: "qwen3", task: "chat", path: qwen3.path, contextSize: 1024, parallel: 1}
            ],
            // Models load when first asked for (the model library); one request may wait beside a running one.
            config: {preloadAll: false, queueSize: 1}
        });
    });
    afterAll(() => server?.stop());

    const tokenize = async (body: Record<string, unknown>, route = "/v1/tokenize") => {
        const response = await server.post(route, body);
        return {status: response.status, body: await jsonOf(response)};
    };
    const detokenize = async (tokens: unknown[], model = "tiny") => {
        const response = await server.post("/v1/detokenize", {model, tokens});
        return {status: response.status, body: await jsonOf(response)};
    };
    const expectRefused = async (route: string, body: Record<string, unknown>, param: string, message?: string) => {
        const response = await server.post(route, body);
        const {error} = await jsonOf(response);
        expect(response.status, JSON.stringify(error)).toBe(400);
        expect(error.type).toBe("invalid_request_error");
        expect(error.param).toBe(param);
        if (message != null)
            expect(error.message).toContain(message);
    };

    it("a model that is not loaded loads on demand, as for chat", async () => {
        const statusOf = async (id: string) => (await jsonOf(await fetch(`${server.url}/v1/models/${id}`))).status.value;
        expect(await statusOf("tiny")).toBe("unloaded");
        const {status, body} = await tokenize({model: "tiny", content: "Hello world"});
        expect(status).toBe(200);
        expect(body).toEqual({tokens: [hello, world], count: 2, max_model_len: 4096});
        expect(await statusOf("tiny")).toBe("loaded");
    });

    it("tokenizes text as llama.cpp does: llama-server's add_special (off) and vLLM's add_special_tokens (on for `prompt`)", async () => {
        expect((await tokenize({model: "tiny", content: "Hello world", add_special: true})).body.tokens).toEqual([bos.id, hello, world]);
        expect((await tokenize({model: "tiny", prompt: "Hello world"})).body.tokens).toEqual([bos.id, hello, world]);
        expect((await tokenize({model: "tiny", prompt: "Hello world", add_special_tokens: false})).body.tokens).toEqual([hello, world]);
        expect((await tokenize({model: "tiny", content: ""})).body).toEqual({tokens: [], count: 0, max_model_len: 4096});
    });

    it("parses special-token text unless parse_special is false", async () => {
        expect((await tokenize({model: "tiny", content: "<|im_start|>Hello<|im_end|>"})).body.tokens).toEqual([imStart.id, hello, imEnd.id]);
        const plain = (await tokenize({model: "tiny", content: "<|im_start|>", parse_special: false})).body.tokens as number[];
        expect(plain).not.toContain(imStart.id);
        // `▁<`, then the characters one by one: `<|im_start|>` spelled out, 12 characters.
        expect(plain).toHaveLength(13);
    });

    it("gives each token's piece as llama-server does: text, or byte values when the piece is not valid UTF-8", async () => {
        const {body} = await tokenize({model: "tiny", content: "Hello é<|im_end|>", add_special: true, with_pieces: true});
        expect(body).toEqual({
            tokens: [
                {id: bos.id, piece: "<s>"}, {id: hello, piece: " Hello"}, {id: space, piece: " "},
                // é is C3 A9: two byte tokens, neither valid UTF-8 alone (llama-server's README shows the same for á).
                {id: firstByte.id + 0xc3, piece: [0xc3]}, {id: firstByte.id + 0xa9, piece: [0xa9]},
                {id: imEnd.id, piece: "<|im_end|>"}
            ],
            count: 6, max_model_len: 4096
        });
    });

    it("tokenizes `messages` as the chat request's prompt (Qwen3's real template), with its chat_template_kwargs", async () => {
        const rendered = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n";
        const {status, body} = await tokenize({model: "qwen3", messages: hi});
        expect(status).toBe(200);
        // The template's text, tokenized with its special tokens, after the BOS the model asks for (as a chat prompt gets it).
        expect(body.tokens).toEqual([bos.id, ...(await tokenize({model: "qwen3", content: rendered})).body.tokens]);
        const chat = await jsonOf(await server.post("/v1/chat/completions", {model: "qwen3", messages: hi, max_tokens: 1}));
        expect(body.count).toBe(chat.usage.prompt_tokens);

        // Qwen3's switch writes an empty think block after the generation prompt.
        const noThinking = await tokenize({model: "qwen3", messages: hi, chat_template_kwargs: {enable_thinking: false}});
        expect(noThinking.body.tokens).toEqual([bos.id, ...(await tokenize({model: "qwen3", content: `${rendered}<think>\n\n</think>\n\n`})).body.tokens]);
    });

    it("detokenizes with llama.cpp's detokenizer (control tokens as their text), under llama-server's and vLLM's names", async () => {
        expect((await detokenize([bos.id, imStart.id, hello, world])).body).toEqual({content: "<s><|im_start|> Hello world", prompt: "<s><|im_start|> Hello world"});
        expect((await detokenize([firstByte.id + 0xc3, firstByte.id + 0xa9])).body.content).toBe("é");
        expect((await detokenize([])).body.content).toBe("");
    });

    it("round-trips text through tokenize and detokenize", async () => {
        for (const text of ["Hello world", "Once upon a time, there was a fox. Ünïcödé: 日本 🙂!"]) {
            const {body} = await tokenize({model: "tiny", content: text});
            expect((await detokenize(body.tokens)).body.content).toBe(text);
        }
    });

    it("a large text is tokenized, and its tokens detokenized, off the main thread (the chat prompts' render thread)", async () => {
        const text = "Once upon a time, there was a little fox and a big dog. ".repeat(2000);
        const held = async <T>(work: () => Promise<T>): Promise<T> => {
            const hold = holdOffThreadWork("prompt-render");
            try {
                const answered = work();
                await Promise.race([hold.arrived(), answered.then(() => {
                    throw new Error("Answered without going off the main thread");
                })]);
                expect((await fetch(`${server.url}/health/live`)).status).toBe(200);
                hold.release();
                return await answered;
            } finally {
                hold.release();
            }
        };
        const tokens = await held(async () => (await tokenize({model: "tiny", content: text})).body.tokens as number[]);
        expect(tokens.length).toBeGreaterThan(16_384);
        expect(tokens.slice(0, 20)).toEqual((await tokenize({model: "tiny", content: text.slice(0, 112)})).body.tokens.slice(0, 20));
        expect(await held(async () => (await detokenize(tokens)).body.content)).toBe(text);
        // With pieces: the list is written in the render thread as the bytes JSON.stringify gives for the same answer.
        const response = await held(() => fetch(`${server.url}/v1/tokenize`, {
            method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({model: "tiny", content: text, with_pieces: true})
        }));
        expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
        const bytes = await response.text();
        const body = JSON.parse(bytes) as {tokens: {id: number, piece: string}[], count: number, max_model_len: number};
        expect(bytes).toBe(JSON.stringify(body));
        expect(body.tokens.map(({id}) => id)).toEqual(tokens);
        expect(body.count).toBe(tokens.length);
        // SentencePiece writes the text's first word with its leading space ("▁Once").
        const joined = body.tokens.map(({piece}) => piece).join("");
        expect(joined === ` ${text}`).toBe(true);
        const small = (await tokenize({model: "tiny", content: text.slice(0, 112), with_pieces: true})).body;
        expect(body.tokens.slice(0, 20)).toEqual(small.tokens.slice(0, 20));
        expect(body.max_model_len).toBe(small.max_model_len);
    });

    it("refuses bad input with a 400 naming the field", async () => {
        await expectRefused("/v1/tokenize", {model: "tiny"}, "content", "Missing required parameter");
        await expectRefused("/v1/tokenize", {model: "tiny", content: "a", messages: hi}, "messages", "cannot be sent together");
        await expectRefused("/v1/tokenize", {model: "tiny", content: 3}, "content");
        await expectRefused("/v1/tokenize", {model: "tiny", content: "x".repeat(1_048_577)}, "content");
        await expectRefused("/v1/tokenize", {model: "tiny", content: "a", with_pieces: "yes"}, "with_pieces");
        await expectRefused("/v1/tokenize", {model: "tiny", content: "a", add_special: true, add_special_tokens: false}, "add_special");
        await expectRefused("/v1/tokenize", {model: "tiny", content: "a", chat_template_kwargs: {}}, "chat_template_kwargs", "applies to 'messages' only");
        await expectRefused("/v1/tokenize", {model: "tiny", content: "a", return_token_strs: true}, "return_token_strs");
        await expectRefused("/v1/tokenize", {model: "qwen3", messages: hi, add_generation_prompt: false}, "add_generation_prompt");
        await expectRefused("/v1/tokenize", {model: "qwen3", messages: [{role: "robot", content: "hi"}]}, "messages[0].role");
        // The checks of a chat request, in its words: the tiny model's template has no tool support.
        await expectRefused("/v1/tokenize", {model: "tiny", messages: hi, tools: [{type: "function", function: {name: "f", parameters: {}}}]}, "tools");
        await expectRefused("/v1/tokenize", {content: "a"}, "model", "serves 2 chat models");
        await expectRefused("/v1/detokenize", {model: "tiny", tokens: [1, 2.5]}, "tokens[1]", "not a token id");
        await expectRefused("/v1/detokenize", {model: "tiny", tokens: [1, "2"]}, "tokens[1]");
        await expectRefused("/v1/detokenize", {model: "tiny", tokens: [-1]}, "tokens[0]");
        await expectRefused("/v1/detokenize", {model: "tiny", tokens: [100_000]}, "tokens[0]", "is not a token id of this model");
        await expectRefused("/v1/detokenize", {model: "tiny", tokens: Array.from({length: 1_000_001}, () => 1)}, "tokens");
        await expectRefused("/v1/detokenize", {model: "tiny"}, "tokens");
        const unknown = await server.post("/v1/tokenize", {model: "nope", content: "a"});
        expect(unknown.status).toBe(404);
    });

    it("a busy model answers 503 with Retry-After, as chat does, and tokenizes again once free", async () => {
        const controllers = [new AbortController(), new AbortController()];
        // The tiny model never ends a turn by itself: the first runs, the second waits (queue size 1).
        const long = {model: "tiny", messages: hi, max_tokens: 4000, stream: true};
        await Promise.all(controllers.map((controller) => server.post("/v1/chat/completions", long, {signal: controller.signal})));
        const load = async () => (await jsonOf(await fetch(`${server.url}/health`))).models.tiny;
        expect(await eventually(async () => (await load()).waiting === 1)).toBe(true);
        const chat = await server.post("/v1/chat/completions", {model: "tiny", messages: hi});
        for (const response of [await server.post("/v1/tokenize", {model: "tiny", content: "a"}), await server.post("/v1/detokenize", {model: "tiny", tokens: [1]})]) {
            expect(response.status).toBe(503);
            expect(response.headers.get("retry-after")).toBe(chat.headers.get("retry-after"));
            expect((await jsonOf(response)).error.code).toBe("server_overloaded");
        }
        controllers.forEach((controller) => controller.abort());
        expect(await eventually(async () => (await load()).busy === 0)).toBe(true);
        expect((await tokenize({model: "tiny", content: "Hello"})).body.tokens).toEqual([hello]);
    });

    it("/metrics counts the requests by route", async () => {
        await tokenize({model: "tiny", content: "Hello"});
        await detokenize([hello]);
        const families = parsePrometheusTextFormat(await (await fetch(`${server.url}/metrics`)).text());
        const requests = families.find((family) => family.name === "los_requests_total")!;
        const count = (endpoint: string, status: string) => requests.metrics
            .filter((metric) => "labels" in metric && metric.labels!.endpoint === endpoint && metric.labels!.status === status)
            .reduce((sum, metric) => sum + Number((metric as {value: string}).value), 0);
        expect(count("/v1/tokenize", "200")).toBeGreaterThanOrEqual(10);
        expect(count("/v1/tokenize", "400")).toBeGreaterThanOrEqual(10);
        expect(count("/v1/detokenize", "200")).toBeGreaterThanOrEqual(4);
        expect(count("/v1/tokenize", "503")).toBe(1);
    });
});

describe("llama-server's /tokenize and /detokenize, behind the API key", () => {
    let server: TestServer;
    const key = {Authorization: "Bearer sk-tokenize-1", "Content-Type": "application/json"};
    beforeAll(async () => {
        server = await startTestServer({models: [{id: "tiny", task: "chat", path: tinyChatModelPath, contextSize: 512, parallel: 1}], config: {apiKeys: ["sk-tokenize-1"]}});
    });
    afterAll(() => server?.stop());

    it("answers llama-server's shapes without a model when the server serves one chat model", async () => {
        const tokenized = await rawRequest(server.url, {method: "POST", target: "/tokenize", headers: key,
            body: JSON.stringify({content: "Hello<|im_end|>", add_special: true, parse_special: true, with_pieces: true})});
        expect(tokenized.status).toBe(200);
        const {tokens} = JSON.parse(tokenized.body);
        expect(tokens).toEqual([{id: bos.id, piece: "<s>"}, {id: hello, piece: " Hello"}, {id: imEnd.id, piece: "<|im_end|>"}]);
        const detokenized = await rawRequest(server.url, {method: "POST", target: "/detokenize", headers: key, body: JSON.stringify({tokens: [hello, world]})});
        expect(JSON.parse(detokenized.body).content).toBe("Hello world");
    });

    it("needs the key on every route, however its path is spelled", async () => {
        const body = JSON.stringify({content: "Hello", tokens: [1]});
        // Spellings the router takes for the route, and encoded or doubled ones it does not (404 with the key, 401 without).
        const matched = ["/tokenize", "/TOKENIZE", "/Tokenize/", "/detokenize", "/Detokenize/", "/v1/tokenize", "/V1/Tokenize/", "/tokenize?x=1"];
        const unmatched = ["/%74okenize", "//tokenize", "/v1/%64etokenize"];
        for (const target of [...matched, ...unmatched]) {
            const without = await rawRequest(server.url, {method: "POST", target, headers: {"Content-Type": "application/json"}, body});
            expect(without.status, target).toBe(401);
            const wrong = await rawRequest(server.url, {method: "POST", target, headers: {...key, Authorization: "Bearer sk-tokenize-2"}, body});
            expect(wrong.status, target).toBe(401);
            const withKey = await rawRequest(server.url, {method: "POST", target, headers: key, body});
            expect(withKey.status, `${target}: ${withKey.body}`).toBe(matched.includes(target) ? 200 : 404);
        }
    });
});

describe("--context-size: the context of chat models without a manifest contextSize", () => {
    it("sets their tokens per sequence, the manifest's own wins, 0 is the model's training context", async () => {
        const entries = [{id: "plain", task: "chat", path: tinyChatModelPath, parallel: 1}, {id: "sized", task: "chat", path: tinyChatModelPath, contextSize: 1024, parallel: 1}];
        const maxModelLen = async (target: TestServer, model: string) => (await jsonOf(await target.post("/v1/tokenize", {model, content: "hi"}))).max_model_len;
        const sized = await startTestServer({models: entries, config: {contextSize: 512}});
        try {
            expect(await maxModelLen(sized, "plain")).toBe(512);
            expect(await maxModelLen(sized, "sized")).toBe(1024);
            const refused = await sized.post("/v1/chat/completions", {model: "plain", max_tokens: 1, messages: [{role: "user", content: "hello ".repeat(600)}]});
            expect(refused.status).toBe(400);
            expect((await jsonOf(refused)).error.message).toContain("maximum context length is 512 tokens");
        } finally {
            await sized.stop();
        }
        const trained = await startTestServer({models: entries.slice(0, 1), config: {contextSize: 0}});
        try {
            const {readGgufFileInfo} = await import("node-llama-cpp");
            const trainContext = (await readGgufFileInfo(tinyChatModelPath)).architectureMetadata.context_length;
            expect(await maxModelLen(trained, "plain")).toBe(trainContext);
        } finally {
            await trained.stop();
        }
    });
});
