import { afterEach, describe, expect, it } from "vitest";
import { jsonOf, readSse, startTestServer, type TestServer } from "../support/startTestServer.js";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
import { tinyChatModelPath } from "../support/testModels.js";

// The HTTP layer against scripted engines: behaviour that a real model cannot be made to show on demand.
const models = [{id: "fake", task: "chat", path: tinyChatModelPath}];
let server: TestServer | undefined;
afterEach(async () => {
    await server?.stop();
    server = undefined;
});

describe("HTTP layer with a fake engine", () => {
    it("answers /health 503 while models load, then 200", async () => {
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
        const early = await server.post("/v1/chat/completions", {model: "fake", messages: [{role: "user", content: "x"}]});
        expect(early.status).toBe(503);
        expect(early.headers.get("retry-after")).toBeTruthy();

        finishLoading();
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
        expect(contents).toEqual(["", "Hel", "lo"]);
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
        expect(lines.join("")).toMatch(/POST \/v1\/chat\/completions .*model="fake" user="alice@example"/);
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
});
