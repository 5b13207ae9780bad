import { afterEach, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
import { rawRequest } from "../support/rawRequest.js";
import { tinyChatModelPath } from "../support/testModels.js";
import type { Config } from "../../src/config.js";

// CORS and the DNS-rebinding guard, on the wire (node:http, so Host and Origin can be set freely).
const models = [{id: "fake", task: "chat", path: tinyChatModelPath}];
let server: TestServer | undefined;
afterEach(async () => {
    await server?.stop();
    server = undefined;
});
const start = (config: Partial<Config> = {}, apiKey?: string) => startTestServer({
    models, config, apiKey, factories: {chat: async () => new FakeChatEngine("fake", {pieces: ["Hel", "lo"]})}
});
const chatBody = JSON.stringify({model: "fake", messages: [{role: "user", content: "hi"}]});
// What the openai client sends, as a browser would announce it in a preflight.
const clientHeaders = "authorization,content-type,x-stainless-os,x-stainless-lang,x-stainless-package-version,x-stainless-runtime,x-stainless-runtime-version,x-stainless-arch,x-stainless-retry-count,x-stainless-timeout,openai-organization";

describe("CORS", () => {
    it("answers a preflight from a loopback origin with 204 and what the openai client needs, without a key", async () => {
        server = await start({apiKeys: ["sk-test"]}, "sk-test");
        const response = await rawRequest(`${server.url}/v1/chat/completions`, {method: "OPTIONS", headers: {
            Origin: "http://localhost:5173", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": clientHeaders
        }});
        expect(response.status).toBe(204);
        expect(response.headers["access-control-allow-origin"]).toBe("http://localhost:5173");
        expect(response.headers["access-control-allow-methods"]).toContain("POST");
        const allowed = String(response.headers["access-control-allow-headers"]).toLowerCase().split(/,\s*/);
        for (const name of clientHeaders.split(","))
            expect(allowed, name).toContain(name);
        expect(Number(response.headers["access-control-max-age"])).toBeGreaterThan(0);
        expect(String(response.headers.vary)).toMatch(/Origin/);
        // The openai client's responses.delete() from a page: DELETE is asked for in the preflight.
        const deletion = await rawRequest(`${server.url}/v1/responses/resp_x`, {method: "OPTIONS", headers: {
            Origin: "http://localhost:5173", "Access-Control-Request-Method": "DELETE", "Access-Control-Request-Headers": clientHeaders
        }});
        expect(String(deletion.headers["access-control-allow-methods"]).split(/,\s*/)).toContain("DELETE");
    });

    it("allows the headers the Anthropic client sends from a browser, and exposes request-id and x-should-retry", async () => {
        server = await start({apiKeys: ["sk-test"]}, "sk-test");
        const anthropicHeaders = "x-api-key,anthropic-version,anthropic-beta,anthropic-dangerous-direct-browser-access,content-type,x-stainless-lang";
        const preflight = await rawRequest(`${server.url}/v1/messages`, {method: "OPTIONS", headers: {
            Origin: "http://localhost:5173", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": anthropicHeaders
        }});
        expect(preflight.status).toBe(204);
        const allowed = String(preflight.headers["access-control-allow-headers"]).toLowerCase().split(/,\s*/);
        for (const name of anthropicHeaders.split(","))
            expect(allowed, name).toContain(name);
        const response = await rawRequest(`${server.url}/v1/messages`, {method: "POST", body: "{}",
            headers: {Origin: "http://localhost:5173", "Content-Type": "application/json"}});
        expect(response.status).toBe(401);
        const exposed = String(response.headers["access-control-expose-headers"]).toLowerCase().split(/,\s*/);
        expect(exposed).toEqual(expect.arrayContaining(["request-id", "x-should-retry", "retry-after"]));
        expect(response.headers["x-should-retry"]).toBe("false");
    });

    it("puts Allow-Origin, Expose-Headers and Vary on answers to allowed origins, errors included", async () => {
        server = await start({apiKeys: ["sk-test"]}, "sk-test");
        for (const [headers, status] of [[{Authorization: "Bearer sk-test"}, 200], [{}, 401]] as const) {
            const response = await rawRequest(`${server.url}/v1/chat/completions`, {method: "POST", body: chatBody,
                headers: {...headers, Origin: "http://127.0.0.1:3000", "Content-Type": "application/json"}});
            expect(response.status).toBe(status);
            expect(response.headers["access-control-allow-origin"]).toBe("http://127.0.0.1:3000");
            expect(String(response.headers["access-control-expose-headers"])).toMatch(/Retry-After.*X-Request-Id/i);
            expect(String(response.headers.vary)).toMatch(/Origin/);
        }
        const v6 = await rawRequest(`${server.url}/health`, {headers: {Origin: "http://[::1]:8000"}});
        expect(v6.headers["access-control-allow-origin"]).toBe("http://[::1]:8000");
    });

    it("gives an origin that is not allowed no CORS header at all, preflight or not (the request itself is refused, key or not)", async () => {
        server = await start({apiKeys: ["sk-test"]}, "sk-test");
        for (const origin of ["https://evil.example", "http://localhost.evil.example:8080", "null"]) {
            const preflight = await rawRequest(`${server.url}/v1/chat/completions`, {method: "OPTIONS", headers: {
                Origin: origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization"
            }});
            expect(preflight.status).toBe(204);
            expect(Object.keys(preflight.headers).filter((name) => name.startsWith("access-control-")), origin).toEqual([]);
            const response = await rawRequest(`${server.url}/v1/models`, {headers: {Origin: origin, Authorization: "Bearer sk-test"}});
            expect(response.status).toBe(403);
            expect(JSON.parse(response.body).error.code).toBe("cross_site_request");
            expect(Object.keys(response.headers).filter((name) => name.startsWith("access-control-")), origin).toEqual([]);
        }
    });

    it("--cors-origins replaces the default: exact origins, any-port patterns, or *", async () => {
        server = await start({corsOrigins: ["https://ui.example.com", "http://box.lan:*"]});
        const allowedOrigin = async (origin: string) => (await rawRequest(`${server!.url}/health`, {headers: {Origin: origin}})).headers["access-control-allow-origin"];
        expect(await allowedOrigin("https://ui.example.com")).toBe("https://ui.example.com");
        expect(await allowedOrigin("https://ui.example.com:444")).toBeUndefined();
        expect(await allowedOrigin("http://box.lan:9999")).toBe("http://box.lan:9999");
        expect(await allowedOrigin("http://localhost:5173")).toBeUndefined();
        await server.stop();
        server = await start({corsOrigins: ["*"]});
        expect(await allowedOrigin("https://anything.example")).toBe("https://anything.example");
    });
});

describe("DNS rebinding guard (no keys)", () => {
    it("refuses a forged Host with a 403 in OpenAI's shape, on every path", async () => {
        server = await start();
        for (const path of ["/v1/models", "/v1/chat/completions", "/health", "/metrics"]) {
            const response = await rawRequest(`${server.url}${path}`, {method: path.endsWith("completions") ? "POST" : "GET",
                body: path.endsWith("completions") ? chatBody : undefined,
                headers: {Host: "rebind.attacker.example:8080", "Content-Type": "application/json"}});
            expect(response.status, path).toBe(403);
            const {error} = JSON.parse(response.body);
            expect(error).toMatchObject({type: "invalid_request_error", code: "host_not_allowed", param: null});
            expect(error.message).toContain("rebind.attacker.example:8080");
            expect(error.message).toContain("--allowed-hosts");
        }
    });

    it("serves loopback names and addresses, with or without a port", async () => {
        server = await start();
        for (const host of ["localhost", "localhost:8080", "127.0.0.1:1234", "127.1.2.3", "[::1]:8080", "[::1]", "LOCALHOST:80"]) {
            const response = await rawRequest(`${server.url}/v1/models`, {headers: {Host: host}});
            expect(response.status, host).toBe(200);
        }
    });

    it("serves names from --allowed-hosts (a reverse proxy), and any Host once keys are on", async () => {
        server = await start({allowedHosts: ["llm.internal"]});
        expect((await rawRequest(`${server.url}/v1/models`, {headers: {Host: "llm.internal:443"}})).status).toBe(200);
        expect((await rawRequest(`${server.url}/v1/models`, {headers: {Host: "other.internal"}})).status).toBe(403);
        await server.stop();
        server = await start({apiKeys: ["sk-test"]});
        const response = await rawRequest(`${server.url}/v1/models`, {headers: {Host: "rebind.attacker.example", Authorization: "Bearer sk-test"}});
        expect(response.status).toBe(200);
        expect((await rawRequest(`${server.url}/v1/models`, {headers: {Host: "rebind.attacker.example"}})).status).toBe(401);
    });
});
