import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
import { concretePath, pathSpellings } from "../support/pathSpellings.js";
import { rawRequest } from "../support/rawRequest.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath } from "../support/testModels.js";

// The key check is decided on the route that matched. This walks every route the server registers
// (so a route added later joins without touching this file) and every spelling of its path, without
// a key and with a wrong one, in the "keys" and the "locked" state: no answer may be a 2xx.
// /health/live and /health/ready: probes for balancers and Kubernetes (docs/deployment.md), status only.
// The playground page and its files (GET /, GET /ui/:file) hold no secret: the page asks for a key and keeps it in the tab.
const publicRoutes = ["GET /", "GET /ui/:file", "GET /health", "GET /health/live", "GET /health/ready", "GET /files/images/:name"];
const models = [{id: "fake", task: "chat", path: tinyChatModelPath}];

function requestsFor(server: TestServer) {
    const requests: {method: string, target: string}[] = [];
    for (const route of server.routes.filter((route) => !route.public)) {
        for (const method of route.methods)
            for (const target of pathSpellings(concretePath(route.path)))
                requests.push({method, target});
    }
    return requests;
}

async function expectNoneServed(server: TestServer, headers: Record<string, string>) {
    const served: string[] = [];
    for (const {method, target} of requestsFor(server)) {
        const body = method === "POST" ? JSON.stringify({model: "fake", messages: [{role: "user", content: "hi"}], input: "hi", prompt: "hi"}) : undefined;
        const response = await rawRequest(server.url, {
            method, body, target,
            headers: {...headers, ...(body ? {"Content-Type": "application/json"} : {})}
        });
        if (response.status < 300 || response.status >= 500)
            served.push(`${method} ${target} -> ${response.status}`);
    }
    expect(served).toEqual([]);
}

describe("routes need a key however their path is spelled", () => {
    let server: TestServer;
    beforeAll(async () => {
        server = await startTestServer({models, config: {apiKeys: ["sk-route-key-1"]}, factories: {chat: async () => new FakeChatEngine("fake", {pieces: ["served"]})}});
    });
    afterAll(() => server.stop());

    it("lists its public routes explicitly, and protects every other route", () => {
        const shown = (route: {methods: readonly string[], path: string}) => route.methods.filter((method) => method !== "HEAD").map((method) => `${method} ${route.path}`);
        expect(server.routes.filter((route) => route.public).flatMap(shown).sort()).toEqual([...publicRoutes].sort());
        expect(server.routes.filter((route) => !route.public).flatMap(shown)).toEqual(expect.arrayContaining(["GET /v1/models", "POST /v1/chat/completions", "GET /metrics", "POST /v1/rerank", "POST /rerank", "POST /v2/rerank"]));
    });

    it("serves the canonical spelling with the key (the requests below would reach the handlers)", async () => {
        const response = await rawRequest(server.url, {target: "/V1/models/", headers: {Authorization: "Bearer sk-route-key-1"}});
        expect(response.status).toBe(200);
        const chat = await rawRequest(server.url, {
            target: "/V1/Chat/Completions",
            method: "POST", headers: {Authorization: "Bearer sk-route-key-1", "Content-Type": "application/json"},
            body: JSON.stringify({model: "fake", messages: [{role: "user", content: "hi"}]})
        });
        expect(chat.status).toBe(200);
        expect(chat.body).toContain("served");
    });

    it("answers no spelling of any protected route without a key", async () => {
        await expectNoneServed(server, {});
    });

    it("answers no spelling of any protected route with a wrong key", async () => {
        await expectNoneServed(server, {Authorization: "Bearer sk-route-key-2"});
    });

    it("answers 401 for unknown paths without a key, and 404 with one", async () => {
        expect((await rawRequest(`${server.url}/V1/nothing-here`)).status).toBe(401);
        expect((await rawRequest(`${server.url}/nothing-here`)).status).toBe(401);
        expect((await rawRequest(`${server.url}/nothing-here`, {headers: {Authorization: "Bearer sk-route-key-1"}})).status).toBe(404);
    });

    it("keeps /health public, in any spelling the router accepts", async () => {
        expect((await rawRequest(`${server.url}/health`)).status).toBe(200);
        expect((await rawRequest(`${server.url}/HEALTH/`)).status).toBe(200);
    });
});

describe("in the locked state (the last key revoked)", () => {
    let server: TestServer;
    let keysDir: string;
    beforeAll(async () => {
        // A keys file that exists but holds no key is what revoking the last one leaves: locked.
        keysDir = fs.mkdtempSync(path.join(os.tmpdir(), "los-test-"));
        fs.writeFileSync(path.join(keysDir, "api-keys.json"), JSON.stringify({keys: []}));
        server = await startTestServer({models, config: {apiKeysFile: path.join(keysDir, "api-keys.json")}, factories: {chat: async () => new FakeChatEngine("fake", {pieces: ["served"]})}});
    });
    afterAll(async () => {
        await server.stop();
        fs.rmSync(keysDir, {recursive: true, force: true});
    });

    it("answers no spelling of any protected route", async () => {
        expect(server.keys.state).toBe("locked");
        await expectNoneServed(server, {});
    });
});
