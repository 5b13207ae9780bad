import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gatedFakeChatEngine } from "../support/gatedFakeChatEngine.js";
import { jsonOf, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath } from "../support/testModels.js";

const models = [{id: "gated", task: "chat", path: tinyChatModelPath}];
let server: TestServer | undefined;
afterEach(async () => {
    await server?.stop();
    server = undefined;
});

async function probe(url: string, path: string) {
    const response = await fetch(`${url}${path}`);
    return {status: response.status, body: await jsonOf(response), retryAfter: response.headers.get("retry-after")};
}

const chat = (target: TestServer) => target.post("/v1/chat/completions", {model: "gated", messages: [{role: "user", content: "hi"}]});

describe("GET /health/ready and /health/live", () => {
    it("go loading -> ready -> saturated -> ready -> draining, while /health/live says the process answers", async () => {
        let finishLoading!: () => void;
        const loading = new Promise<void>((resolve) => finishLoading = resolve);
        const gated = gatedFakeChatEngine("gated");
        // Two sequences (the fake's parallel) and no waiting room: two requests in flight fill the replica.
        server = await startTestServer({
            models, waitUntilReady: false, config: {queueSize: 0, drainSeconds: 2},
            factories: {chat: async () => (await loading, gated.engine)}
        });
        const {url} = server;

        expect(await probe(url, "/health/ready")).toEqual({status: 503, body: {status: "unavailable", reason: "loading"}, retryAfter: "1"});
        expect(await probe(url, "/health/live")).toMatchObject({status: 200, body: {status: "alive"}});

        finishLoading();
        await server.ready;
        expect(await probe(url, "/health/ready")).toEqual({status: 200, body: {status: "ready"}, retryAfter: null});

        const first = chat(server);
        const second = chat(server);
        await gated.started(2);
        expect(await probe(url, "/health/ready")).toMatchObject({status: 503, body: {reason: "saturated"}});
        // /health keeps its meaning: the models are loaded.
        expect((await probe(url, "/health")).status).toBe(200);

        gated.release();
        expect((await first).status).toBe(200);
        expect((await second).status).toBe(200);
        expect(await probe(url, "/health/ready")).toMatchObject({status: 200, body: {status: "ready"}});

        // Graceful shutdown: from its first moment the replica is not ready, yet it serves for --drain-seconds.
        const closing = server.close();
        expect(await probe(url, "/health/ready")).toEqual({status: 503, body: {status: "unavailable", reason: "draining"}, retryAfter: "1"});
        expect((await probe(url, "/health/live")).status).toBe(200);
        const during = await chat(server);
        expect(during.status).toBe(200);
        expect((await jsonOf(during)).choices[0].message.content).toBe("first second");
        await closing;
        await expect(fetch(`${url}/health/live`)).rejects.toThrow();
    });

    it("answers 503 'failed' when a model failed to load", async () => {
        server = await startTestServer({models, waitUntilReady: false, factories: {chat: async () => { throw new Error("broken file"); }}});
        await server.ready.catch(() => {});
        expect(await probe(server.url, "/health/ready")).toMatchObject({status: 503, body: {reason: "failed"}});
    });

    it("with nothing preloaded (library mode) both answer 200 at once, every model unloaded, as docs/api.md says", async () => {
        server = await startTestServer({models, config: {preloadAll: false}, factories: {chat: async () => gatedFakeChatEngine("gated").engine}});
        expect(await probe(server.url, "/health")).toMatchObject({status: 200, body: {status: "ok", models: {}}});
        expect(await probe(server.url, "/health/ready")).toMatchObject({status: 200, body: {status: "ready"}});
        expect((await jsonOf(await fetch(`${server.url}/v1/models/gated`))).status.value).toBe("unloaded");
        const rows = fs.readFileSync(path.resolve(import.meta.dirname, "../../docs/api.md"), "utf8").split("\n").filter((line) => /^\| GET \| `\/health(\/ready)?` \|/.test(line));
        expect(rows).toHaveLength(2);
        for (const row of rows) {
            expect(row).toContain("preloaded models");
            expect(row).not.toMatch(/every model is loaded/);
        }
    });

    it("needs no API key, as /health", async () => {
        server = await startTestServer({models, config: {apiKeys: ["sk-ready-1"]}, factories: {chat: async () => gatedFakeChatEngine("gated").engine}});
        expect((await probe(server.url, "/health/ready")).status).toBe(200);
        expect((await probe(server.url, "/health/live")).status).toBe(200);
        expect((await fetch(`${server.url}/v1/models`)).status).toBe(401);
    });
});
