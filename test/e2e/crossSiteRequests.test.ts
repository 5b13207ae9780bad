import { afterEach, describe, expect, it } from "vitest";
import type { Config } from "../../src/config.js";
import { chatBody, startChatAndWhisperServer, uploadBody, uploadBoundary } from "../support/chatAndWhisperServer.js";
import type { FakeChatEngine } from "../support/FakeChatEngine.js";
import type { FakeTranscriptionEngine } from "../support/FakeTranscriptionEngine.js";
import { RawConnection } from "../support/rawConnection.js";
import { rawRequest } from "../support/rawRequest.js";
import type { TestServer } from "../support/startTestServer.js";

// Cross-site requests (docs/security.md, "Web pages"): what a browser's Origin and Sec-Fetch-Site say decides,
// on the wire, before any route reads a body; keys or not. Every header combination a browser sends, on a JSON
// route, an upload route (no CORS preflight protects it), GET routes, an unknown path and an odd spelling.
let server: TestServer | undefined;
let chat: FakeChatEngine;
let whisper: FakeTranscriptionEngine;
let logLines: string[];
afterEach(async () => {
    await server?.stop();
    server = undefined;
});

async function start(config: Partial<Config> = {}, apiKey?: string) {
    logLines = [];
    ({server, chat, whisper} = await startChatAndWhisperServer({config: {logLevel: "info", ...config}, apiKey, logLines}));
    return server;
}

type Target = {name: string, method: string, path: string, headers: Record<string, string>, body?: string};
const targets: Target[] = [
    {name: "chat (JSON)", method: "POST", path: "/v1/chat/completions", headers: {"Content-Type": "application/json"}, body: chatBody},
    {name: "chat, odd spelling", method: "POST", path: "/V1/Chat/Completions/", headers: {"Content-Type": "application/json"}, body: chatBody},
    {name: "chat as a text/plain form", method: "POST", path: "/v1/chat/completions", headers: {"Content-Type": "text/plain"}, body: chatBody},
    {name: "transcription (multipart)", method: "POST", path: "/v1/audio/transcriptions", headers: {"Content-Type": `multipart/form-data; boundary=${uploadBoundary}`}, body: uploadBody},
    {name: "an unknown path", method: "POST", path: "/v1/nothing/here", headers: {"Content-Type": "application/json"}, body: chatBody}
];

const send = (target: Target, headers: Record<string, string>) =>
    rawRequest(`${server!.url}${target.path}`, {method: target.method, headers: {...target.headers, ...headers}, body: target.body});

/** A 403 `cross_site_request`, with no CORS header (the page must not read even that). */
function expectRefused(response: {status: number, body: string, headers: Record<string, unknown>}, label: string) {
    expect(response.status, label).toBe(403);
    expect(JSON.parse(response.body).error, label).toMatchObject({type: "invalid_request_error", code: "cross_site_request", param: null});
    expect(Object.keys(response.headers).filter((name) => name.startsWith("access-control-")), label).toEqual([]);
}

describe("cross-site requests, no keys (the default npm start)", () => {
    it("refuses every request from an origin that is not allowed, whatever Sec-Fetch-Site says, on every route and content type", async () => {
        await start();
        const refused: [origin: string, site: string | null][] = [
            ["https://evil.example", null], ["https://evil.example", "cross-site"], ["https://evil.example", "same-site"], ["https://evil.example", "none"],
            ["http://localhost.evil.example:8080", "cross-site"], ["http://127.0.0.1.evil.example", null],
            // A page with `Referrer-Policy: no-referrer` (or a sandboxed frame) sends `Origin: null`.
            ["null", "cross-site"], ["null", null]
        ];
        for (const target of targets)
            for (const [origin, site] of refused) {
                const response = await send(target, {Origin: origin, ...site == null ? {} : {"Sec-Fetch-Site": site}});
                expectRefused(response, `${target.name} from ${origin}, Sec-Fetch-Site ${site}`);
            }
        // Nothing ran, and the request log shows each refusal.
        expect(chat.jobs).toHaveLength(0);
        expect(whisper.jobs).toHaveLength(0);
        expect(logLines.filter((line) => / INFO POST .* status=403 /.test(line))).toHaveLength(targets.length * refused.length);
    });

    it("refuses a request without Origin that changes something when the browser says it comes from another site", async () => {
        await start();
        for (const target of targets)
            for (const site of ["cross-site", "same-site", "CROSS-SITE"])
                expectRefused(await send(target, {"Sec-Fetch-Site": site}), `${target.name}, Sec-Fetch-Site ${site}`);
        expect(chat.jobs).toHaveLength(0);
        expect(whisper.jobs).toHaveLength(0);
    });

    it("serves clients that are not browsers, allowed origins, the server's own origin and same-origin pages", async () => {
        await start();
        const own = new URL(server!.url).origin;
        const served: Record<string, string>[] = [
            {},                                                       // curl, SDKs: neither header
            {"Sec-Fetch-Site": "same-origin"}, {"Sec-Fetch-Site": "none"},
            {Origin: "http://localhost:5173", "Sec-Fetch-Site": "cross-site"}, // a local web UI: the default --cors-origins
            {Origin: "http://[::1]:3000"},
            {Origin: own},                                            // the playground, in a browser without Sec-Fetch-Site
            {Origin: own, "Sec-Fetch-Site": "same-origin"},
            {Origin: "null", "Sec-Fetch-Site": "same-origin"}         // the playground: its pages send no referrer
        ];
        for (const headers of served) {
            expect((await send(targets[0], headers)).status, JSON.stringify(headers)).toBe(200);
            expect((await send(targets[3], headers)).status, JSON.stringify(headers)).toBe(200);
        }
        expect(chat.jobs).toHaveLength(served.length);
        expect(whisper.jobs).toHaveLength(served.length);
    });

    it("GET and HEAD: refused with a foreign Origin (a page's fetch), served without one (links, images)", async () => {
        await start();
        for (const path of ["/v1/models", "/v1/models/fake", "/health", "/health/live", "/V1/MODELS/"]) {
            expectRefused(await rawRequest(`${server!.url}${path}`, {headers: {Origin: "https://evil.example", "Sec-Fetch-Site": "cross-site"}}), path);
            for (const method of ["GET", "HEAD"]) {
                const navigation = await rawRequest(`${server!.url}${path}`, {method, headers: {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}});
                expect(navigation.status, `${method} ${path}`).toBe(200);
            }
            expect((await rawRequest(`${server!.url}${path}`, {headers: {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}})).status, path).toBe(200);
            expect((await rawRequest(`${server!.url}${path}`, {headers: {Origin: "http://localhost:8000", "Sec-Fetch-Site": "cross-site"}})).status, path).toBe(200);
        }
    });

    it("refuses an upload from a foreign page before reading its body", async () => {
        await start();
        // The head of a 20 MB upload and its first bytes: the answer comes while the rest is never sent.
        const upload = await RawConnection.request(`${server!.url}/v1/audio/transcriptions`, "POST", {
            Origin: "https://evil.example", "Content-Type": `multipart/form-data; boundary=${uploadBoundary}`, "Content-Length": 20 * 1024 * 1024
        }, uploadBody.slice(0, 100));
        const answer = await upload.answer();
        expectRefused(answer, "upload");
        upload.destroy();
        const json = await RawConnection.request(`${server!.url}/v1/chat/completions`, "POST", {
            Origin: "null", "Sec-Fetch-Site": "cross-site", "Content-Type": "application/json", "Content-Length": 9 * 1024 * 1024
        }, chatBody.slice(0, 10));
        expectRefused(await json.answer(), "json");
        json.destroy();
        expect(whisper.jobs).toHaveLength(0);
        expect(chat.jobs).toHaveLength(0);
    });

    it("the DNS-rebinding guard answers first: a forged Host is named as such", async () => {
        await start();
        const response = await send(targets[0], {Host: "rebind.attacker.example:8080", Origin: "http://rebind.attacker.example:8080"});
        expect(response.status).toBe(403);
        expect(JSON.parse(response.body).error.code).toBe("host_not_allowed");
    });
});

describe("cross-site requests with keys", () => {
    it("refuses a foreign origin before the key check, with a valid key too; an allowed origin still needs the key", async () => {
        await start({apiKeys: ["sk-test"]});
        for (const headers of [{}, {Authorization: "Bearer sk-test"}, {Authorization: "Bearer wrong"}] as Record<string, string>[])
            for (const target of targets)
                expectRefused(await send(target, {...headers, Origin: "https://evil.example"}), `${target.name} ${JSON.stringify(headers)}`);
        expect((await send(targets[0], {Origin: "http://localhost:5173"})).status).toBe(401);
        expect((await send(targets[0], {Origin: "http://localhost:5173", Authorization: "Bearer sk-test"})).status).toBe(200);
        expect(chat.jobs).toHaveLength(1);
        expect(whisper.jobs).toHaveLength(0);
    });
});

describe("cross-site requests with --cors-origins and --public-url", () => {
    it("allows exactly the configured origins, the public URL's and the server's own Host", async () => {
        await start({corsOrigins: ["https://ui.example.com"], publicUrl: "https://llm.example.com", apiKeys: ["sk-test"]});
        const withKey = (origin: string) => send(targets[0], {Origin: origin, Authorization: "Bearer sk-test"});
        expect((await withKey("https://ui.example.com")).status).toBe(200);
        expect((await withKey("https://llm.example.com")).status).toBe(200);
        expect((await withKey(new URL(server!.url).origin)).status).toBe(200);
        // TLS ended by a proxy that keeps the Host: the page's origin is https, the Host the same name.
        expect((await send(targets[0], {Origin: "https://llm.internal", Host: "llm.internal", Authorization: "Bearer sk-test"})).status).toBe(200);
        for (const origin of ["http://localhost:5173", "http://127.0.0.1:1", "https://ui.example.com:8443", "http://ui.example.com", "https://llm.example.com.evil.example"])
            expectRefused(await withKey(origin), origin);
        // The Host is compared as a name and port, nothing a URL would read past.
        expectRefused(await send(targets[0], {Origin: "http://127.0.0.1", Host: "evil.example@127.0.0.1", Authorization: "Bearer sk-test"}), "user info in Host");
        expect(chat.jobs).toHaveLength(4);
    });
});
