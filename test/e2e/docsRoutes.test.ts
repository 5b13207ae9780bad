import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath } from "../support/testModels.js";

// The README's endpoint table and docs/api.md's route table list exactly the routes the server has
// (a route added without documenting it, or documented and gone, fails here).
const root = path.resolve(import.meta.dirname, "../..");
let server: TestServer;
beforeAll(async () => {
    server = await startTestServer({models: [{id: "fake", task: "chat", path: tinyChatModelPath}], factories: {chat: async () => new FakeChatEngine("fake", {pieces: ["a"]})}});
});
afterAll(() => server.stop());

const served = () => new Set(server.routes.flatMap((route) => route.methods.filter((method) => method !== "HEAD").map((method) => `${method} ${route.path}`)));
/** `METHOD /path` in backticks, `{id}` written as `:id`. */
const documented = (text: string) => new Set([...text.matchAll(/`(GET|POST|PUT|PATCH|DELETE) (\/[^`?\s]*)/g)].map((match) => `${match[1]} ${match[2].replace(/\{(\w+)\}/g, ":$1")}`));

describe("documented routes", () => {
    it("the README's endpoint table lists every route, and no other", () => {
        const readme = fs.readFileSync(path.join(root, "README.md"), "utf8");
        const table = readme.slice(readme.indexOf("## Endpoints"), readme.indexOf("\n## ", readme.indexOf("## Endpoints") + 5));
        expect([...documented(table)].sort()).toEqual([...served()].sort());
    });

    it("docs/api.md's route table lists every route, and no other", () => {
        const api = fs.readFileSync(path.join(root, "docs/api.md"), "utf8");
        const table = api.slice(api.indexOf("## Routes"), api.indexOf("\n## ", api.indexOf("## Routes") + 5));
        const rows = new Set([...table.matchAll(/^\| (GET|POST|PUT|PATCH|DELETE) \| `([^`?]+)/gm)].map((match) => `${match[1]} ${match[2].replace(/\{(\w+)\}/g, ":$1")}`));
        expect([...rows].sort()).toEqual([...served()].sort());
    });

    it("the README stays a landing page", () => {
        expect(fs.readFileSync(path.join(root, "README.md"), "utf8").split("\n").length).toBeLessThanOrEqual(250);
    });
});
