import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../src/config.js";
import { eventually } from "../support/eventually.js";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
import { FakeTranscriptionEngine } from "../support/FakeTranscriptionEngine.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath, tinyWhisperPath } from "../support/testModels.js";

// A hostile web page in a real browser (Debian's chromium through playwright-core) against a server without keys:
// it submits forms (multipart uploads to transcription and to chat: no CORS preflight guards them) and sends
// `fetch` with `mode: "no-cors"`, once as an ordinary page and once with `Referrer-Policy: no-referrer` (then the
// browser sends `Origin: null`). Every request must be refused (403 in the server's log) and no engine may see
// work. The page comes from `http://attacker.test` (chromium maps that name to 127.0.0.1) against the default
// settings, and from another loopback port against a server whose --cors-origins leaves loopback out. The server's
// own page (the playground's origin) still works. Skipped, saying so, where chromium is not installed.
const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const haveChromium = fs.existsSync(chromiumPath);
if (!haveChromium)
    console.warn(`SKIPPING the cross-site page test: no chromium at ${chromiumPath} (apt-get install chromium, or set CHROMIUM_PATH).`);

const attackerPage = (serverUrl: string, noReferrer: boolean) => `<!doctype html><html><head>
${noReferrer ? '<meta name="referrer" content="no-referrer">' : ""}</head><body>
<iframe name="sink1"></iframe><iframe name="sink2"></iframe>
<form id="upload" method="POST" enctype="multipart/form-data" action="${serverUrl}/v1/audio/transcriptions" target="sink1">
    <input name="model" value="whisper"><input type="file" name="file">
</form>
<form id="chat" method="POST" enctype="multipart/form-data" action="${serverUrl}/v1/chat/completions" target="sink2">
    <input name="model" value="fake"><input name="messages" value='[{"role":"user","content":"hi"}]'>
</form>
<script>
async function attack() {
    const file = new File([new Uint8Array(4000)], "speech.wav", {type: "audio/wav"});
    const transfer = new DataTransfer();
    transfer.items.add(file);
    document.querySelector("#upload input[type=file]").files = transfer.files;
    document.getElementById("upload").submit();
    document.getElementById("chat").submit();
    const form = new FormData();
    form.append("model", "whisper");
    form.append("file", file);
    const upload = await fetch(${JSON.stringify(serverUrl)} + "/v1/audio/transcriptions", {method: "POST", mode: "no-cors", body: form});
    const chat = await fetch(${JSON.stringify(serverUrl)} + "/v1/chat/completions", {method: "POST", mode: "no-cors",
        headers: {"Content-Type": "text/plain"}, body: JSON.stringify({model: "fake", messages: [{role: "user", content: "hi"}]})});
    return [upload.type, chat.type];
}
</script></body></html>`;

/** A request the page's own origin (the playground's) sends, as the playground does. */
const ownPageChat = `(async () => {
    const response = await fetch("/v1/chat/completions", {method: "POST", headers: {"Content-Type": "application/json"},
        body: JSON.stringify({model: "fake", messages: [{role: "user", content: "hi"}]})});
    return [response.status, (await response.json()).choices?.[0]?.message?.content];
})()`;

describe.skipIf(!haveChromium)("a hostile page in a browser, against a server without keys", () => {
    let server: TestServer | undefined;
    let chat: FakeChatEngine;
    let whisper: FakeTranscriptionEngine;
    let logLines: string[];
    let pages: http.Server;
    let pagePort: number;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    let browser: any;

    beforeAll(async () => {
        pages = http.createServer((request, response) => {
            const target = new URL(request.url ?? "/", "http://page").searchParams.get("server") ?? "";
            response.writeHead(200, {"Content-Type": "text/html"}).end(attackerPage(target, request.url?.startsWith("/no-referrer") === true));
        });
        await new Promise<void>((resolve) => pages.listen(0, "127.0.0.1", resolve));
        pagePort = (pages.address() as AddressInfo).port;
        const {chromium} = await import("playwright-core");
        browser = await chromium.launch({executablePath: chromiumPath, args: [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--host-resolver-rules=MAP attacker.test 127.0.0.1"
        ]});
    }, 60_000);
    afterEach(async () => {
        await server?.stop();
        server = undefined;
    });
    afterAll(async () => {
        await browser?.close();
        await new Promise((resolve) => pages?.close(resolve));
    });

    async function start(config: Partial<Config> = {}) {
        chat = new FakeChatEngine("fake", {pieces: ["Hel", "lo"]});
        whisper = new FakeTranscriptionEngine("whisper");
        logLines = [];
        server = await startTestServer({
            models: [{id: "fake", task: "chat", path: tinyChatModelPath}, {id: "whisper", task: "transcription", path: tinyWhisperPath}],
            config: {logLevel: "info", ...config}, logLines,
            factories: {chat: async () => chat, transcription: async () => whisper}
        });
        return server;
    }

    /** Loads the attacker's page from `pageOrigin`, lets it attack, and returns the server's log lines of the four requests. */
    async function attackFrom(pageOrigin: string, noReferrer: boolean) {
        logLines.length = 0;
        const tab = await browser.newPage();
        await tab.goto(`${pageOrigin}/${noReferrer ? "no-referrer" : ""}?server=${encodeURIComponent(server!.url)}`);
        // The page cannot tell what happened: both fetches resolve with an opaque answer.
        expect(await tab.evaluate("attack()")).toEqual(["opaque", "opaque"]);
        const posts = () => logLines.filter((line) => / INFO POST \/v1\/(audio\/transcriptions|chat\/completions) /.test(line));
        expect(await eventually(() => posts().length === 4)).toBe(true);
        await tab.close();
        return posts();
    }

    function expectNothingRan(lines: string[]) {
        expect(lines.filter((line) => line.includes("POST /v1/audio/transcriptions"))).toHaveLength(2);
        for (const line of lines)
            expect(line).toMatch(/ status=403 /);
        expect(whisper.jobs).toHaveLength(0);
        expect(chat.jobs).toHaveLength(0);
    }

    it("a page of another site (default settings): its forms and no-cors fetches are refused, nothing runs", async () => {
        await start();
        for (const noReferrer of [false, true])
            expectNothingRan(await attackFrom(`http://attacker.test:${pagePort}`, noReferrer));
        // The server's own page (the playground's origin) is served as before.
        const tab = await browser.newPage();
        await tab.goto(`${server!.url}/`);
        expect(await tab.evaluate(ownPageChat)).toEqual([200, "Hello"]);
        await tab.close();
        expect(chat.jobs).toHaveLength(1);
    });

    it("a page on another loopback port, when --cors-origins does not list loopback: refused, nothing runs", async () => {
        await start({corsOrigins: ["https://ui.example.com"]});
        for (const noReferrer of [false, true])
            expectNothingRan(await attackFrom(`http://127.0.0.1:${pagePort}`, noReferrer));
        const tab = await browser.newPage();
        await tab.goto(`${server!.url}/`);
        expect(await tab.evaluate(ownPageChat)).toEqual([200, "Hello"]);
        await tab.close();
    });
});
