import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readApiKeyFile, writeApiKeyFile } from "../../src/auth/ApiKeyFile.js";
import { hashApiKey } from "../../src/auth/keyHash.js";
import { runKeysCli } from "../../src/auth/keysCli.js";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
import { concretePath, pathSpellings } from "../support/pathSpellings.js";
import { rawRequest, type RawResponse } from "../support/rawRequest.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath } from "../support/testModels.js";

// The management routes are an administrator's: decided on the route that matched (the route table's `admin`), so a
// user's key is refused (403) on every spelling the router accepts, and no spelling reaches a handler with it.
const adminRoutes = ["POST /models/load", "POST /models/pull", "POST /models/unload"];
const models = [{id: "fake", task: "chat", path: tinyChatModelPath}];
const bodies: Record<string, unknown> = {"/models/load": {model: "fake"}, "/models/unload": {model: "fake"}, "/models/pull": {model: "nope"}};

async function cli(...args: string[]) {
    let stdout = "";
    const code = await runKeysCli(args, {stdout: (text) => void (stdout += text), stderr: () => {}});
    expect(code).toBe(0);
    return stdout;
}

const keyOf = (printed: string) => printed.split("\n").find((line) => line.startsWith("sk-local-"))!;

describe("the management routes need an administrator's key, however their path is spelled", () => {
    let server: TestServer;
    let keysDir: string;
    let adminKey: string;
    let userKey: string;
    const oldKey = "sk-local-made-before-roles-existed";
    let created = 0;

    beforeAll(async () => {
        keysDir = fs.mkdtempSync(path.join(os.tmpdir(), "los-test-"));
        const keysFile = path.join(keysDir, "api-keys.json");
        // A key written before roles existed (no `role` field) keeps working, as a user's.
        writeApiKeyFile(keysFile, {keys: [{name: "old", hash: hashApiKey(oldKey), created: "2025-01-01T00:00:00.000Z"}]});
        adminKey = keyOf(await cli("--file", keysFile, "add", "ops", "--admin"));
        userKey = keyOf(await cli("--file", keysFile, "add", "app"));
        server = await startTestServer({
            models, config: {apiKeysFile: keysFile, preloadAll: false},
            factories: {chat: async () => (created++, new FakeChatEngine("fake", {pieces: ["served"]}))},
            pull: {catalogue: () => [], hub: {hfEndpoint: "http://127.0.0.1:9", hfToken: null}}
        });
    });
    afterAll(async () => {
        await server.stop();
        fs.rmSync(keysDir, {recursive: true, force: true});
    });

    const send = (method: string, target: string, key: string | null, body: unknown): Promise<RawResponse> => rawRequest(server.url, {
        method, target, body: JSON.stringify(body),
        headers: {"Content-Type": "application/json", ...(key != null ? {Authorization: `Bearer ${key}`} : {})}
    });
    const codeOf = (response: RawResponse) => response.body.startsWith("{") ? JSON.parse(response.body).error?.code ?? null : null;
    // A handler ran: load and unload answer 2xx, a pull of an unknown name its 404.
    const reachedHandler = (response: RawResponse) => (response.status >= 200 && response.status < 300) || codeOf(response) === "model_not_found";

    it("marks exactly the load, unload and pull routes as an administrator's in the route table", () => {
        expect(server.routes.filter((route) => route.admin).flatMap((route) => route.methods.map((method) => `${method} ${route.path}`)).sort()).toEqual(adminRoutes);
        expect(server.routes.filter((route) => route.admin).every((route) => !route.public)).toBe(true);
        expect(server.routes.find((route) => route.path === "/models")).toMatchObject({methods: expect.arrayContaining(["GET"]), public: false, admin: false});
    });

    it("the keys file records the roles: --admin, and users by default; `keys list` shows them", async () => {
        const keysFile = path.join(keysDir, "api-keys.json");
        expect(readApiKeyFile(keysFile).keys.map((key) => [key.name, key.role ?? "user"])).toEqual([["old", "user"], ["ops", "admin"], ["app", "user"]]);
        expect(await cli("--file", keysFile, "list")).toMatch(/^old  2025-01-01T00:00:00\.000Z  user\nops  \S+  admin\napp  \S+  user\n$/);
        let stderr = "";
        expect(await runKeysCli(["--file", keysFile, "revoke", "app", "--admin"], {stdout: () => {}, stderr: (text) => void (stderr += text)})).toBe(2);
        expect(stderr).toContain("--admin goes with add");
    });

    it("answers no spelling to a user's key (403 where the route matched), while an administrator's key gets the same spelling served", async () => {
        const refusals: string[] = [];
        let forbidden = 0;
        for (const route of server.routes.filter((each) => each.admin)) {
            const body = bodies[route.path];
            for (const method of route.methods.filter((each) => each !== "HEAD"))
                for (const target of pathSpellings(concretePath(route.path))) {
                    for (const key of [userKey, oldKey]) {
                        const before = created;
                        const asUser = await send(method, target, key, body);
                        if (reachedHandler(asUser) || asUser.status >= 500 || created !== before)
                            refusals.push(`${method} ${target} as a user -> ${asUser.status} ${asUser.body.slice(0, 80)}`);
                        const asAdmin = await send(method, target, adminKey, body);
                        if (reachedHandler(asAdmin)) {
                            forbidden++;
                            if (asUser.status !== 403 || codeOf(asUser) !== "insufficient_permissions")
                                refusals.push(`${method} ${target}: served to an administrator, ${asUser.status} to a user (not 403)`);
                        }
                    }
                    const withoutKey = await send(method, target, null, body);
                    // A target that is not a path (`%2fmodels%2fload`) is refused by Node's HTTP parser, before any route.
                    if (withoutKey.status !== 401 && !(withoutKey.status === 400 && !target.startsWith("/")))
                        refusals.push(`${method} ${target} without a key -> ${withoutKey.status}`);
                }
        }
        expect(refusals).toEqual([]);
        // The canonical spelling and the router's other matches (case, trailing slash...) were among them, for each route.
        expect(forbidden).toBeGreaterThanOrEqual(adminRoutes.length * 2 * 4);
    });

    it("a user's key still reads the list and calls the API; the 403 is OpenAI's error, as its client reports it", async () => {
        for (const key of [userKey, oldKey]) {
            const list = await send("GET", "/models", key, undefined);
            expect(list.status).toBe(200);
            expect(JSON.parse(list.body)).toMatchObject({object: "list", data: [{id: "fake"}], can_manage: false});
            const client = new OpenAI({baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 0});
            expect((await client.models.list()).data.map((each) => each.id)).toEqual(["fake"]);
            expect((await client.chat.completions.create({model: "fake", messages: [{role: "user", content: "hi"}]})).choices[0].message.content).toBe("served");
        }
        const root = new OpenAI({baseURL: server.url, apiKey: userKey, maxRetries: 0});
        const error = await root.post("/models/load", {body: {model: "fake"}}).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
        expect(error).toMatchObject({status: 403, code: "insufficient_permissions", type: "invalid_request_error"});
        expect((error as Error).message).toContain("needs an administrator's key (made with `npm run keys -- add <name> --admin` on the server)");
        expect(JSON.parse((await send("GET", "/models", adminKey, undefined)).body).can_manage).toBe(true);
        const asAdmin = new OpenAI({baseURL: server.url, apiKey: adminKey, maxRetries: 0});
        expect(await asAdmin.post("/models/unload", {body: {model: "fake"}})).toMatchObject({success: true});
    });
});

describe("without keys (loopback only)", () => {
    let server: TestServer;
    beforeAll(async () => {
        server = await startTestServer({models, config: {preloadAll: false}, factories: {chat: async () => new FakeChatEngine("fake", {pieces: ["served"]})}});
    });
    afterAll(() => server.stop());

    it("everything is allowed: load and unload need no key", async () => {
        expect(server.keys.state).toBe("open");
        for (const route of ["/models/load", "/models/unload"]) {
            const response = await rawRequest(server.url, {method: "POST", target: route, body: JSON.stringify({model: "fake"}), headers: {"Content-Type": "application/json"}});
            expect(response.status, route).toBe(200);
            expect(JSON.parse(response.body)).toMatchObject({success: true});
        }
    });
});
