import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { playgroundHeaders } from "../../src/server/playground/playgroundRoutes.js";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
import { rawRequest } from "../support/rawRequest.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath } from "../support/testModels.js";

// The playground's files over HTTP (the browser tests in test/browser/playground.test.ts use them):
// (adapted from the playground helper's branch)
// security headers, the host check, `--ui`. No browser needed.
const models = [{id: "fake", task: "chat", path: tinyChatModelPath}];
const factories = {chat: async () => new FakeChatEngine("fake", {pieces: ["x"]})};

describe("the playground's files", () => {
    let server: TestServer;
    beforeAll(async () => {
        server = await startTestServer({models, factories});
    });
    afterAll(() => server.stop());

    it("serves the page at / and its files under /ui/, with a strict CSP and no secret", async () => {
        for (const [target, type] of [["/", "text/html"], ["/ui/app.js", "text/javascript"], ["/ui/style.css", "text/css"]]) {
            const response = await fetch(server.url + target);
            expect(response.status, target).toBe(200);
            expect(response.headers.get("content-type")).toBe(`${type}; charset=utf-8`);
            expect(response.headers.get("content-security-policy")).toBe(playgroundHeaders["Content-Security-Policy"]);
            expect(response.headers.get("x-content-type-options")).toBe("nosniff");
            expect(response.headers.get("referrer-policy")).toBe("no-referrer");
            expect(response.headers.get("x-frame-options")).toBe("DENY");
        }
        const playgroundCsp = playgroundHeaders["Content-Security-Policy"];
        const csp = playgroundCsp.split("; ");
        expect(csp).toEqual(expect.arrayContaining(["script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "default-src 'none'"]));
        expect(playgroundCsp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
        const html = await (await fetch(server.url + "/")).text();
        // One script, from this origin, no inline code or handlers; nothing from elsewhere.
        expect(html.match(/<script[^>]*>/g)).toEqual(['<script type="module" src="/ui/app.js">']);
        expect(html).not.toMatch(/<script>|\son\w+=|https?:\/\//);
    });

    it("answers 404 for a file it does not have, and never serves files outside its folder", async () => {
        expect((await fetch(`${server.url}/ui/nothing.js`)).status).toBe(404);
        for (const target of ["/ui/..%2F..%2Fpackage.json", "/ui/%2e%2e%2fsrc%2fconfig.ts", "/ui/tsconfig.json", "/ui/..%2Fsrc%2Fconfig.ts"])
            expect((await rawRequest(server.url, {target})).status, target).not.toBe(200);
    });

    it("obeys the API's host check (DNS rebinding): a foreign Host gets 403 while the server has no keys", async () => {
        const foreign = await rawRequest(server.url, {target: "/", headers: {Host: "attacker.example:8080"}});
        expect(foreign.status).toBe(403);
        expect(foreign.body).toContain("host_not_allowed");
        expect((await rawRequest(server.url, {target: "/", headers: {Host: "localhost:8080"}})).status).toBe(200);
    });
});

describe("--ui", () => {
    it("off: no page, no assets (404 like any unknown path)", async () => {
        const server = await startTestServer({models, factories, config: {ui: "off"}});
        try {
            expect((await fetch(server.url + "/")).status).toBe(404);
            expect((await fetch(server.url + "/ui/app.js")).status).toBe(404);
            expect(server.routes.some((route) => route.path === "/")).toBe(false);
        } finally {
            await server.stop();
        }
    });

    it("auto by default; on, off and auto parse from the flag and UI, anything else is refused", () => {
        expect(loadConfig([], {}).ui).toBe("auto");
        expect(loadConfig(["--ui", "off"], {}).ui).toBe("off");
        expect(loadConfig([], {UI: "on"}).ui).toBe("on");
        expect(() => loadConfig(["--ui", "maybe"], {})).toThrow(/ui must be one of on, off, auto/);
    });

    it("auto is on for a loopback server and for a server with keys", async () => {
        const withKeys = await startTestServer({models, factories, config: {apiKeys: ["sk-ui"], ui: "auto"}});
        try {
            expect((await fetch(withKeys.url + "/")).status).toBe(200);
        } finally {
            await withKeys.stop();
        }
    });
});
