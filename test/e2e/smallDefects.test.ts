import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { writeApiKeyFile } from "../../src/auth/ApiKeyFile.js";
import { jsonOf, startTestServer, type TestServer } from "../support/startTestServer.js";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
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
                expect(error.message).toContain(`delete ${keysFile} and restart`);
            }
            expect((await fetch(`${server.url}/health`)).status).toBe(200);
        } finally {
            fs.rmSync(dir, {recursive: true, force: true});
        }
    });
});
