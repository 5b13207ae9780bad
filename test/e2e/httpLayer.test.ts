import zlib from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { jsonOf, readSse, startTestServer, type TestServer } from "../support/startTestServer.js";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
import { tinyBertPath, tinyChatModelPath } from "../support/testModels.js";
import type { EmbeddingsEngine } from "../../src/capabilities/embeddings/EmbeddingsEngine.js";

// The HTTP layer against scripted engines: behaviour that a real model cannot be made to show on demand.
const models = [{id: "fake", task: "chat", path: tinyChatModelPath}];
let server: TestServer | undefined;
afterEach(async () => {
    await server?.stop();
    server = undefined;
});

describe("HTTP layer with a fake engine", () => {
    it("answers /health 503 while models load, then 200; a request for the loading model waits and is served", async () => {
        let finishLoading!: () => void;
        const loaded = new Promise<void>((resolve) => finishLoading = resolve);
        server = await startTestServer({
            models, waitUntilReady: false,
            factories: {chat: async () => {
                await loaded;
                return new FakeChatEngine("fake", {pieces: ["a"]});
            }}
        });
        const loading = await fetch(`${server.url}/health`);
        expect(loading.status).toBe(503);
        expect(loading.headers.get("retry-after")).toBe("1");
        expect((await jsonOf(loading)).status).toBe("loading");
        // A request for the loading model waits for it (the model library), then is served.
        const early = server.post("/v1/chat/completions", {model: "fake", messages: [{role: "user", content: "x"}]});
        expect((await fetch(`${server.url}/health`)).status).toBe(503);

        finishLoading();
        expect((await early).status).toBe(200);
        await server.ready;
        const ready = await fetch(`${server.url}/health`);
        expect(ready.status).toBe(200);
        expect((await jsonOf(ready)).status).toBe("ok");
    });

    it("reports an engine failure after the headers as an SSE error event, without internals", async () => {
        server = await startTestServer({
            models,
            factories: {chat: async () => new FakeChatEngine("fake", {pieces: ["Hel", "lo"], failWith: new Error("secret /internal/path exploded")})}
        });
        const response = await server.post("/v1/chat/completions", {model: "fake", messages: [{role: "user", content: "x"}], stream: true});
        expect(response.status).toBe(200);
        const {events, raw} = await readSse(response);
        // The error, then [DONE], as every chat stream ends.
        const [error, done] = events.slice(-2);
        expect(error.event).toBe("error");
        expect(JSON.parse(error.data)).toEqual({error: {
            message: "The server had an error while processing your request. Sorry about that!",
            type: "server_error", param: null, code: "internal_error"
        }});
        expect(done).toEqual({data: "[DONE]"});
        expect(raw).not.toContain("secret");
        const contents = events.slice(0, -2).map((event) => JSON.parse(event.data).choices[0].delta.content);
        expect(contents).toEqual([null, "Hel", "lo"]);
    });

    it("the official client raises the in-stream error", async () => {
        server = await startTestServer({
            models,
            factories: {chat: async () => new FakeChatEngine("fake", {pieces: ["a"], failWith: new Error("boom")})}
        });
        const stream = await server.client.chat.completions.create({model: "fake", messages: [{role: "user", content: "x"}], stream: true});
        const error = await (async () => {
            for await (const _chunk of stream) { /* drain */ }
        })().catch((caught) => caught);
        expect(error?.constructor?.name).toBe("APIError");
        expect(String(error.message)).toContain("The server had an error");
    });

    it("a non-streamed engine failure is a 500 without internals", async () => {
        server = await startTestServer({
            models,
            factories: {chat: async () => new FakeChatEngine("fake", {pieces: ["a"], failWith: new Error("secret detail")})}
        });
        const response = await server.post("/v1/chat/completions", {model: "fake", messages: [{role: "user", content: "x"}]});
        expect(response.status).toBe(500);
        const body = await jsonOf(response);
        expect(body.error.type).toBe("server_error");
        expect(JSON.stringify(body)).not.toContain("secret");
    });

    it("sends SSE comment pings while no token flows", async () => {
        // The engine produces nothing until the client has seen three pings.
        let seenPings!: () => void;
        const pinged = new Promise<void>((resolve) => seenPings = resolve);
        server = await startTestServer({
            models, config: {ssePingMs: 20},
            factories: {chat: async () => new FakeChatEngine("fake", {pieces: ["slow", "ly"], beforePiece: (index) => index === 0 ? pinged : Promise.resolve()})}
        });
        const response = await server.post("/v1/chat/completions", {model: "fake", messages: [{role: "user", content: "x"}], stream: true});
        const reader = response.body!.getReader();
        const decoder = new TextDecoder();
        let raw = "";
        while ((raw.match(/^: ping\n\n/gm) ?? []).length < 3) {
            const {done, value} = await reader.read();
            expect(done).toBe(false);
            raw += decoder.decode(value, {stream: true});
        }
        // No token was sent before the engine was let go (only the opening role chunk and pings).
        expect(raw).not.toContain('"content":"slow"');
        seenPings();
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
            raw += decoder.decode(chunk.value, {stream: true});
        expect(raw).toContain('"content":"slow"');
        expect(raw.endsWith("data: [DONE]\n\n")).toBe(true);
    });

    it("passes OpenAI defaults to the engine and logs the user field", async () => {
        const lines: string[] = [];
        const engine = new FakeChatEngine("fake", {pieces: ["a"]});
        server = await startTestServer({models, factories: {chat: async () => engine}, config: {logLevel: "info"}});
        const original = process.stderr.write.bind(process.stderr);
        process.stderr.write = ((chunk: string) => {
            lines.push(String(chunk));
            return true;
        }) as typeof process.stderr.write;
        try {
            await server.post("/v1/chat/completions", {model: "fake", messages: [{role: "user", content: "x"}], user: "alice@example"});
        } finally {
            process.stderr.write = original;
        }
        expect(lines.join("")).toMatch(/POST \/v1\/chat\/completions .*model="fake" .*user="alice@example"/);
        const job = engine.jobs[0];
        expect(job.sampling).toMatchObject({temperature: 1, topP: 1, frequencyPenalty: 0, presencePenalty: 0});
        expect(job.maxTokens).toBeNull();
        expect(job.n).toBe(1);
    });

    it("survives a barrage of malformed requests", async () => {
        const engine = new FakeChatEngine("fake", {pieces: ["a"]});
        server = await startTestServer({models, factories: {chat: async () => engine}});
        const bodies: unknown[] = [
            null, 0, "x", [], {}, {model: null}, {model: "fake"}, {model: "fake", messages: null}, {model: "fake", messages: [null]},
            {model: "fake", messages: [[]]}, {model: "fake", messages: [{role: "user", content: [null]}]},
            {model: "fake", messages: [{role: "user", content: [{type: null}]}]}, {model: "fake", messages: [{role: "user", content: "x"}], stop: [null]},
            {model: "fake", messages: [{role: "user", content: "x"}], logit_bias: {"1": "a"}}, {model: "fake", messages: [{role: "user", content: "x"}], logit_bias: []},
            {model: "fake", messages: [{role: "user", content: "x"}], n: 1e300}, {model: "fake", messages: [{role: "user", content: "x"}], seed: 1e300},
            {model: "fake", messages: [{role: "user", content: "x"}], response_format: "json"}, {model: "fake", messages: [{role: "user", content: "x"}], stream_options: []},
            {model: {toString: "x"}, messages: [{role: "user", content: "x"}]}
        ];
        for (const body of bodies) {
            const response = await server.post("/v1/chat/completions", JSON.stringify(body));
            expect(response.status, JSON.stringify(body)).toBe(400);
            expect((await jsonOf(response)).error.type).toBe("invalid_request_error");
        }
        // A "__proto__" key is refused by the body parser (prototype-pollution guard) with a clear 400.
        const proto = await server.post("/v1/chat/completions", '{"__proto__": {"polluted": true}, "model": "fake", "messages": [{"role": "user", "content": "x"}]}');
        expect(proto.status).toBe(400);
        expect((await jsonOf(proto)).error.code).toBe("invalid_json");
        // Valid after all: NaN serialises as null, which means the default.
        const nan = JSON.stringify({model: "fake", messages: [{role: "user", content: "x"}], temperature: Number.NaN});
        expect((await server.post("/v1/chat/completions", nan)).status).toBe(200);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        expect((await fetch(`${server.url}/health`)).status).toBe(200);
        expect(engine.load().busy).toBe(0);
    });

    it("caps every text field of the request log: a 1 MB `user` on each route makes a line of bounded size", async () => {
        const logLines: string[] = [];
        const embeddings: EmbeddingsEngine = {
            info: {id: "embed", maxInputTokens: 512, dimensions: 2, vocabularySize: 100, matryoshka: false, normalize: false},
            load: () => ({parallel: 1, busy: 0, waiting: 0}),
            embed: async (inputs) => ({vectors: inputs.map(() => Float32Array.of(1, 0)), promptTokens: inputs.length}),
            dispose: async () => {}
        };
        server = await startTestServer({
            models: [...models, {id: "embed", task: "embeddings", path: tinyBertPath}], config: {logLevel: "info"}, logLines,
            factories: {chat: async () => new FakeChatEngine("fake", {pieces: ["a"]}), embeddings: async () => embeddings}
        });
        const user = "u".repeat(1024 * 1024);
        const messages = [{role: "user", content: "x"}];
        const requests: [path: string, body: unknown, status: number, logsUser: boolean][] = [
            ["/v1/responses", {model: "fake", input: "x", user}, 200, true],
            ["/v1/messages", {model: "fake", max_tokens: 5, messages, metadata: {user_id: user}}, 200, true],
            ["/v1/embeddings", {model: "embed", input: "x", user}, 200, true],
            // Chat and legacy completions refuse a `user` over 512 characters (their schema): their line stays short too.
            ["/v1/chat/completions", {model: "fake", messages, user}, 400, false],
            ["/v1/completions", {model: "fake", prompt: "x", user}, 400, false]
        ];
        for (const [path, body, status, logsUser] of requests) {
            logLines.length = 0;
            const response = await server.post(path, body, {headers: {"Content-Type": "application/json", "anthropic-version": "2023-06-01"}});
            expect(response.status, path).toBe(status);
            await response.arrayBuffer();
            const line = logLines.find((text) => text.includes(`POST ${path} `));
            expect(line, path).toBeDefined();
            expect(line!.length, path).toBeLessThan(2000);
            if (logsUser)
                expect(line, path).toContain(` user="${"u".repeat(512)}... (1048576 characters)"`);
        }
        // The path is client text too.
        logLines.length = 0;
        const longPath = `/v1/${"p".repeat(10_000)}`;
        expect((await fetch(`${server.url}${longPath}`)).status).toBe(404);
        expect(logLines).toHaveLength(1);
        expect(logLines[0].length).toBeLessThan(2000);
        expect(logLines[0]).toContain(`GET ${longPath.slice(0, 512)}... (10004 characters)`);
    });

    it("reads gzip, deflate and br bodies (the body limit applies to the decoded bytes); another encoding is a 415, a broken one a 400", async () => {
        const engine = new FakeChatEngine("fake", {pieces: ["a"]});
        server = await startTestServer({models, factories: {chat: async () => engine}, config: {bodyLimit: "64kb"}});
        const body = Buffer.from(JSON.stringify({model: "fake", messages: [{role: "user", content: "x"}]}));
        const post = (encoding: string, bytes: Uint8Array) => fetch(`${server!.url}/v1/chat/completions`, {
            method: "POST", headers: {"Content-Type": "application/json", "Content-Encoding": encoding}, body: bytes
        });
        for (const [encoding, encoded] of [["gzip", zlib.gzipSync(body)], ["deflate", zlib.deflateSync(body)], ["br", zlib.brotliCompressSync(body)]] as const)
            expect((await post(encoding, encoded)).status, encoding).toBe(200);
        expect(engine.jobs).toHaveLength(3);
        // 1 MB of spaces compresses to 1 KB: past the 64 KB limit once decoded.
        const bomb = await post("gzip", zlib.gzipSync(Buffer.concat([body.subarray(0, -1), Buffer.alloc(1024 * 1024, " "), Buffer.from("}")])));
        expect(bomb.status).toBe(413);
        expect((await jsonOf(bomb)).error.message).toContain("64kb");
        const unknown = await post("compress", body);
        expect(unknown.status).toBe(415);
        expect((await jsonOf(unknown)).error.message).toContain("'compress'");
        const broken = await post("gzip", body);
        expect(broken.status).toBe(400);
        expect((await jsonOf(broken)).error.code).toBe("invalid_encoding");
        expect(engine.jobs).toHaveLength(3);
    });

    it("refuses a prototype key in a large body as in a small one", async () => {
        server = await startTestServer({models, factories: {chat: async () => new FakeChatEngine("fake", {pieces: ["a"]})}});
        const filler = "x".repeat(1.5 * 1024 * 1024);
        for (const text of [
            `{"model": "fake", "messages": [{"role": "user", "content": "${filler}"}], "metadata": {"__proto__": {"polluted": true}}}`,
            `{"model": "fake", "messages": [{"role": "user", "content": "x"}], "tools": [{"constructor": {"prototype": {"polluted": true}}}]}`
        ]) {
            const response = await server.post("/v1/chat/completions", text);
            expect(response.status).toBe(400);
            const {error} = await jsonOf(response);
            expect(error).toMatchObject({code: "invalid_json"});
            expect(error.message).toMatch(/'(__proto__|constructor)' key/);
        }
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
});
