import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
import { tinyChatModelPath } from "../support/testModels.js";

// A real browser engine (Debian's chromium through playwright-core) loads a page from another
// loopback origin, which calls the server with a key: preflight, streamed chat read chunk by chunk,
// headers the page may read. Skipped, saying so, where chromium is not installed
// (`apt-get install chromium`): CI machines without it still run everything else.
const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const haveChromium = fs.existsSync(chromiumPath);
if (!haveChromium)
    console.warn(`SKIPPING the browser CORS test: no chromium at ${chromiumPath} (apt-get install chromium, or set CHROMIUM_PATH).`);

const apiKey = "sk-browser-test";
const page = (serverUrl: string) => `<!doctype html><html><body><script>
async function chat() {
    const response = await fetch(${JSON.stringify(serverUrl)} + "/v1/chat/completions", {
        method: "POST",
        headers: {"Authorization": "Bearer ${apiKey}", "Content-Type": "application/json", "X-Stainless-Lang": "js", "X-Stainless-Retry-Count": "0"},
        body: JSON.stringify({model: "fake", stream: true, messages: [{role: "user", content: "hi"}]})
    });
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let raw = "";
    for (;;) {
        const {done, value} = await reader.read();
        if (done) break;
        raw += decoder.decode(value, {stream: true});
    }
    const text = raw.split("\\n").filter((line) => line.startsWith("data: {"))
        .map((line) => JSON.parse(line.slice(6)).choices[0]?.delta?.content ?? "").join("");
    return {status: response.status, requestId: response.headers.get("x-request-id"), text, done: raw.includes("data: [DONE]")};
}
</script></body></html>`;

describe.skipIf(!haveChromium)("a browser page on another origin", () => {
    let server: TestServer;
    let pages: http.Server;
    let pagePort: number;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    let browser: any;

    beforeAll(async () => {
        server = await startTestServer({
            models: [{id: "fake", task: "chat", path: tinyChatModelPath}], apiKey,
            config: {apiKeys: [apiKey]},
            factories: {chat: async () => new FakeChatEngine("fake", {pieces: ["Hel", "lo", " world"]})}
        });
        pages = http.createServer((_request, response) => response.writeHead(200, {"Content-Type": "text/html"}).end(page(server.url)));
        await new Promise<void>((resolve) => pages.listen(0, "127.0.0.1", resolve));
        pagePort = (pages.address() as AddressInfo).port;
        const {chromium} = await import("playwright-core");
        browser = await chromium.launch({executablePath: chromiumPath, args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]});
    }, 60_000);
    afterAll(async () => {
        await browser?.close();
        await new Promise((resolve) => pages?.close(resolve));
        await server?.stop();
    });

    it("streams a chat completion with a key, after a preflight answered without one", async () => {
        const tab = await browser.newPage();
        await tab.goto(`http://localhost:${pagePort}/`);
        const result = await tab.evaluate("chat()");
        expect(result).toMatchObject({status: 200, text: "Hello world", done: true});
        expect(result.requestId).toMatch(/^req_/);
        await tab.close();
    });

    it("is blocked when the page's origin is not allowed", async () => {
        await server.stop();
        server = await startTestServer({
            models: [{id: "fake", task: "chat", path: tinyChatModelPath}], apiKey,
            config: {apiKeys: [apiKey], corsOrigins: ["https://ui.example.com"]},
            factories: {chat: async () => new FakeChatEngine("fake", {pieces: ["x"]})}
        });
        const tab = await browser.newPage();
        await tab.goto(`http://localhost:${pagePort}/`);
        // The page still calls the old URL; point it at the new server.
        const error = await tab.evaluate(`(async () => {
            try { await fetch(${JSON.stringify(server.url)} + "/v1/models", {headers: {Authorization: "Bearer ${apiKey}"}}); return "allowed"; }
            catch (caught) { return String(caught); }
        })()`);
        expect(error).toMatch(/TypeError: Failed to fetch/);
        await tab.close();
    });
});
