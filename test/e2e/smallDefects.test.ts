import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { writeApiKeyFile } from "../../src/auth/ApiKeyFile.js";
import { loadConfig } from "../../src/config.js";
import { jsonOf, startTestServer, type TestServer } from "../support/startTestServer.js";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
import { FakeImageEngine } from "../support/FakeImageEngine.js";
import { rawRequest } from "../support/rawRequest.js";
import { tinyChatModelPath } from "../support/testModels.js";

const models = [{id: "fake", task: "chat", path: tinyChatModelPath}];
let server: TestServer | undefined;
afterEach(async () => {
    await server?.stop();
    server = undefined;
});

describe("405 answers", () => {
    it("carry an Allow header listing the route's methods, with an OpenAI-shaped body", async () => {
        server = await startTestServer({models, factories: {chat: async () => new FakeChatEngine("fake", {pieces: ["a"]})}});
        for (const [method, pathName, allow] of [
            ["GET", "/v1/chat/completions", "POST"],
            ["DELETE", "/v1/embeddings", "POST"],
            ["POST", "/v1/models", "HEAD, GET"],
            ["PUT", "/v1/models/fake", "HEAD, GET"],
            ["POST", "/health", "HEAD, GET"]
        ]) {
            const response = await fetch(`${server.url}${pathName}`, {method});
            expect(response.status, `${method} ${pathName}`).toBe(405);
            expect(response.headers.get("allow"), `${method} ${pathName}`).toBe(allow);
            expect((await jsonOf(response)).error).toMatchObject({type: "invalid_request_error", code: "method_not_allowed"});
        }
    });
});

describe("a model that fails to load", () => {
    it("is named, with its file, in the error", async () => {
        server = await startTestServer({models, waitUntilReady: false, factories: {chat: async () => {
            throw new Error("Invalid GGUF magic");
        }}});
        const error = await server.ready.catch((caught) => caught);
        expect(error.message).toBe(`Model 'fake' failed to load from ${tinyChatModelPath}: Invalid GGUF magic`);
    });

    it("is named by the real engine too (a file that is not a GGUF)", async () => {
        const bad = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "los-bad-")), "broken.gguf");
        fs.writeFileSync(bad, "this is not a model");
        try {
            server = await startTestServer({models: [{id: "broken", task: "chat", path: bad}], waitUntilReady: false});
            const error = await server.ready.catch((caught) => caught);
            expect(error.message).toMatch(new RegExp(`^Model 'broken' failed to load from ${bad.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: `));
        } finally {
            fs.rmSync(path.dirname(bad), {recursive: true, force: true});
        }
    });
});

describe("keys: no key left means locked", () => {
    it("a keys file without keys at startup locks every /v1 request with a message saying how to add one; /health stays open", async () => {
        // The keys file that revoking the last key leaves behind.
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "los-locked-"));
        const keysFile = path.join(dir, "api-keys.json");
        writeApiKeyFile(keysFile, {keys: []});
        try {
            server = await startTestServer({models, config: {apiKeysFile: keysFile}, factories: {chat: async () => new FakeChatEngine("fake", {pieces: ["a"]})}});
            expect(server.keys.state).toBe("locked");
            for (const pathName of ["/v1/models", "/v1/chat/completions"]) {
                const response = await fetch(`${server.url}${pathName}`, {headers: {Authorization: "Bearer anything"}});
                expect(response.status).toBe(401);
                const {error} = await jsonOf(response);
                expect(error.code).toBe("invalid_api_key");
                expect(error.message).toContain("No API key exists");
                expect(error.message).toContain("npm run keys -- add <name>");
                // Unauthenticated callers learn nothing of the server's files.
                expect(error.message).not.toContain(dir);
                expect(error.message).not.toContain("api-keys.json");
            }
            expect((await fetch(`${server.url}/health`)).status).toBe(200);
        } finally {
            fs.rmSync(dir, {recursive: true, force: true});
        }
    });
});

describe("smaller hardening (security issue, item 6)", () => {
    it("an unknown model's name is echoed at most 100 characters long", async () => {
        server = await startTestServer({models, factories: {chat: async () => new FakeChatEngine("fake", {pieces: ["a"]})}});
        const name = "m".repeat(1024 * 1024);
        const response = await server.post("/v1/chat/completions", {model: name, messages: [{role: "user", content: "hi"}]});
        expect(response.status).toBe(404);
        const {error} = await jsonOf(response);
        expect(error.message.length).toBeLessThan(400);
        expect(error.message).toContain(`${"m".repeat(100)}... (1048576 characters)`);
    });

    it("--host '[::1]' (bracketed, as in a URL) is the IPv6 loopback address", () => {
        expect(loadConfig(["--host", "[::1]"], {}).host).toBe("::1");
        expect(loadConfig([], {HOST: "[::1]"}).host).toBe("::1");
    });
});

describe("request media types", () => {
    it("a JSON-looking type the parser does not read (application/evil+json) is a 415, not a confusing 400", async () => {
        server = await startTestServer({models, factories: {chat: async () => new FakeChatEngine("fake", {pieces: ["a"]})}});
        const body = JSON.stringify({model: "fake", messages: [{role: "user", content: "hi"}]});
        const evil = await fetch(`${server.url}/v1/chat/completions`, {method: "POST", headers: {"Content-Type": "application/evil+json"}, body});
        expect(evil.status).toBe(415);
        expect((await jsonOf(evil)).error.code).toBe("unsupported_media_type");
        const plain = await fetch(`${server.url}/v1/chat/completions`, {method: "POST", headers: {"Content-Type": "application/json; charset=utf-8"}, body});
        expect(plain.status).toBe(200);
    });
});

describe("/health details", () => {
    it("without keys (loopback only): the models and their load, to anyone", async () => {
        server = await startTestServer({models, factories: {chat: async () => new FakeChatEngine("fake", {pieces: ["a"]})}});
        expect(Object.keys((await jsonOf(await fetch(`${server.url}/health`))).models)).toEqual(["fake"]);
    });

    it("with keys: only the status without a key, the details with one; HEALTH_DETAILS=public shows them to anyone", async () => {
        server = await startTestServer({models, config: {apiKeys: ["sk-health"]}, factories: {chat: async () => new FakeChatEngine("fake", {pieces: ["a"]})}});
        const anonymous = await fetch(`${server.url}/health`);
        expect(anonymous.status).toBe(200);
        expect(await jsonOf(anonymous)).toEqual({status: "ok"});
        expect(await jsonOf(await fetch(`${server.url}/health`, {headers: {Authorization: "Bearer wrong"}}))).toEqual({status: "ok"});
        expect(Object.keys((await jsonOf(await fetch(`${server.url}/health`, {headers: {Authorization: "Bearer sk-health"}}))).models)).toEqual(["fake"]);
        await server.stop();
        server = await startTestServer({models, config: {apiKeys: ["sk-health"], healthDetails: "public"}, factories: {chat: async () => new FakeChatEngine("fake", {pieces: ["a"]})}});
        expect(Object.keys((await jsonOf(await fetch(`${server.url}/health`))).models)).toEqual(["fake"]);
    });
});

describe("links the server hands out", () => {
    const imageModels = [{id: "sd", task: "image", path: tinyChatModelPath, defaults: {steps: 2}}];
    const post = (target: string, host: string) => rawRequest(server!.url, {
        method: "POST", target,
        headers: {"Content-Type": "application/json", Authorization: "Bearer sk-links", Host: host},
        body: JSON.stringify({model: "sd", prompt: "a red fox", response_format: "url"})
    });

    it("are never built from an untrusted Host header (with keys on, any Host is served): the bound address instead", async () => {
        server = await startTestServer({models: imageModels, config: {apiKeys: ["sk-links"]}, factories: {image: async (entry) => new FakeImageEngine(entry.id)}});
        const response = await post("/v1/images/generations", "evil.example");
        expect(response.status).toBe(200);
        const url: string = JSON.parse(response.body).data[0].url;
        expect(url.startsWith(`${server.url}/files/images/`)).toBe(true);
        // A loopback Host is the client's own view of the server, and is kept.
        const local = JSON.parse((await post("/v1/images/generations", `localhost:${new URL(server.url).port}`)).body).data[0].url;
        expect(local.startsWith(`http://localhost:${new URL(server.url).port}/files/images/`)).toBe(true);
    });

    it("use --public-url when it is set", async () => {
        server = await startTestServer({models: imageModels, config: {apiKeys: ["sk-links"], publicUrl: "https://llm.example.com"}, factories: {image: async (entry) => new FakeImageEngine(entry.id)}});
        const url: string = JSON.parse((await post("/v1/images/generations", "evil.example")).body).data[0].url;
        expect(url).toMatch(/^https:\/\/llm\.example\.com\/files\/images\/[0-9a-f]{32}\.png$/);
    });
});

describe("messages a newcomer reads", () => {
    it("a port in use names the port and --port", async () => {
        server = await startTestServer({models, factories: {chat: async () => new FakeChatEngine("fake", {pieces: ["a"]})}});
        const port = Number(new URL(server.url).port);
        const error = await startTestServer({models, config: {port}, factories: {chat: async () => new FakeChatEngine("fake", {pieces: ["a"]})}}).catch((caught: Error) => caught);
        expect((error as Error).message).toBe(`Port ${port} on 127.0.0.1 is already in use (another server?): stop it, or choose another port with --port (or PORT), e.g. --port ${port + 1}.`);
    });
});
