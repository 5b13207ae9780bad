import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeApiKeyFile } from "../../src/auth/ApiKeyFile.js";
import { hashApiKey } from "../../src/auth/keyHash.js";
import { FakeHub } from "../download/fakeHub.js";
import { hubFiles, testCatalogue } from "../download/fixtures.js";
import { gate, library } from "../support/libraryFakes.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath } from "../support/testModels.js";
import { haveChromium, openPage, screenshots, useBrowser, type El } from "./browserPage.js";

// The playground's Models tab and the model library in a real browser: fake chat models whose loads are held at gates
// (libraryFakes), so "loading" is seen for as long as the test holds it, and pulls from the loopback stand-in hub of the
// download tests. The page polls GET /models only while something is under way; the tests wait for page states.
const mb = 1024 ** 2;
const model = (id: string, extra: Record<string, unknown> = {}) => ({id, task: "chat", path: tinyChatModelPath, ...extra});

const browser = useBrowser();

/** The rows of the models table: id, status and the text of each cell. */
async function rowsOf(page: El): Promise<{id: string, status: string, cells: string[], action: string | null}[]> {
    return page.$$eval("[data-tab=models] tbody tr", (rows: El[]) => rows.map((row) => ({
        id: row.dataset.model, status: row.querySelector("[data-role=status]").dataset.status,
        cells: Array.from(row.querySelectorAll("td"), (cell: El) => cell.textContent),
        action: row.querySelector("button")?.textContent ?? null
    })));
}

/** The models tab's module is fetched when the tab is first shown: its table is there once it is built. */
const modelsReady = (page: El) => page.waitForSelector("[data-tab=models] tbody tr");

const statusCell = (id: string, status: string) => `[data-tab=models] tr[data-model="${id}"] [data-status="${status}"]`;

describe.skipIf(!haveChromium)("the playground's Models tab (no keys: everyone manages models)", () => {
    let server: TestServer;
    let hub: FakeHub;
    const fakes = library();
    const outside: string[] = [];

    beforeAll(async () => {
        const catalogue = testCatalogue();
        hub = await new FakeHub(hubFiles(catalogue)).start();
        server = await startTestServer({
            models: [model("a", {aliases: ["gpt-4o-mini"]}), model("b"), model("c", {pin: true, keepAlive: "10m"})],
            // Model a is estimated to put 300 MB on a GPU too (the VRAM bar).
            config: {preloadAll: false, memoryBudget: 1024 * mb, vramBudget: 2048 * mb, keepAliveSeconds: null},
            factories: {chat: fakes.factory}, estimateBytes: async (entry) => entry.id === "a" ? {ram: 100 * mb, vram: 300 * mb} : 100 * mb,
            pull: {hub: {hfEndpoint: hub.url, hfToken: null}, catalogue: () => catalogue, pullRetryDelayMs: 0}
        });
    }, 60_000);
    afterAll(async () => {
        await server?.stop();
        await hub?.close();
    });

    it("lists every model with its status and memory; Load shows 'loading' while the load is held, then 'loaded'; Unload gives the memory back", async () => {
        const held = gate();
        fakes.loadGates.set("a", held.opened);
        // The load tells how far it is (as a GGUF's does), then is held there.
        fakes.loadProgress.set("a", [0.2, 0.42]);
        const {page, context, errors} = await openPage(browser(), `${server.url}/#models`, outside);
        await modelsReady(page);
        expect(await page.$$eval("nav button", (buttons: El[]) => buttons.map((button) => button.textContent))).toEqual(["Chat", "Decide", "Models"]);
        const before = await rowsOf(page);
        expect(before.map((row) => [row.id, row.status, row.action])).toEqual([["a", "unloaded", "Load"], ["b", "unloaded", "Load"], ["c", "unloaded", "Load"]]);
        // id with aliases, task, status, memory (none known before a load), last used, keep-alive, pinned.
        expect(before[0].cells.slice(0, 7)).toEqual(["agpt-4o-mini", "chat", "unloaded", "— · —", "never", "forever", ""]);
        expect(before[2].cells.slice(5, 7)).toEqual(["10m", "pinned"]);
        expect(await page.textContent("[data-role=memory]")).toBe("0 B of 1.0 GB in use (the models' estimates)");
        expect(await page.textContent("[data-role=vram]")).toBe("0 B of 2.0 GB in use (the models' estimates)");
        // The chat tab's picker lists every model, loaded or not.
        expect(await page.$$eval("[data-tab=chat] select[name=model] option", (options: El[]) => options.map((option) => option.value))).toEqual(["a", "b", "c"]);

        await page.click("[data-tab=models] tr[data-model=a] button[data-action=load]");
        await fakes.loadStarted("a");
        await page.waitForSelector(`${statusCell("a", "loading")} [data-role=load-progress]`);
        expect(await page.textContent(`${statusCell("a", "loading")} [data-role=load-progress]`)).toBe("42%");
        expect(await page.$eval(`${statusCell("a", "loading")} progress`, (bar: El) => bar.value)).toBe(0.42);
        await page.screenshot({path: path.join(screenshots, "models-loading.png"), fullPage: true});
        held.open();
        await page.waitForSelector(statusCell("a", "loaded"));
        await page.locator("[data-tab=models] tr[data-model=a] button[data-action=unload]:not([disabled])").waitFor();
        const loaded = (await rowsOf(page))[0];
        expect(loaded.cells[3]).toMatch(/^100 MB · /);
        expect(loaded.cells[4]).not.toBe("never");
        expect(await page.textContent("[data-role=memory]")).toBe("100 MB of 1.0 GB in use (the models' estimates)");
        expect(await page.$eval("[data-role=memory-bar]", (meter: El) => [meter.value, meter.max])).toEqual([100 * mb, 1024 * mb]);
        expect(await page.textContent("[data-role=vram]")).toBe("300 MB of 2.0 GB in use (the models' estimates)");
        expect(await page.$eval("[data-role=vram-bar]", (meter: El) => [meter.value, meter.max])).toEqual([300 * mb, 2048 * mb]);
        expect(await page.isVisible("[data-role=vram-bar]")).toBe(true);
        await page.screenshot({path: path.join(screenshots, "models.png"), fullPage: true});

        await page.click("[data-tab=models] tr[data-model=a] button[data-action=unload]");
        await page.waitForSelector(statusCell("a", "unloaded"));
        await page.locator("[data-role=memory]", {hasText: /^0 B of/}).waitFor();
        expect(fakes.disposed).toEqual(["a"]);
        expect(await page.textContent("[data-role=models-error]")).toBe("");
        expect(errors).toEqual([]);
        await context.close();
    });

    it("chat: a request for an unloaded model shows \"loading b…\" until its answer begins", async () => {
        const held = gate();
        fakes.loadGates.set("b", held.opened);
        const {page, context, errors} = await openPage(browser(), `${server.url}/#chat`, outside);
        await page.waitForSelector("body[data-ready=true]");
        await page.selectOption("[data-tab=chat] select[name=model]", "b");
        await page.fill("[data-tab=chat] textarea[name=prompt]", "hi");
        await page.click("[data-tab=chat] button[type=submit]");
        await fakes.loadStarted("b");
        await page.locator("[data-tab=chat] .message.assistant:last-child .muted", {hasText: /^loading b…$/}).waitFor();
        expect(await page.textContent("[data-tab=chat] .message.assistant:last-child .markdown")).toBe("");
        await page.screenshot({path: path.join(screenshots, "chat-loading.png"), fullPage: true});
        held.open();
        await page.locator("[data-tab=chat] .message.assistant:last-child .stats", {hasText: "tokens/s"}).waitFor();
        expect(await page.textContent("[data-tab=chat] .message.assistant:last-child .markdown")).toBe("hello there");
        expect(await page.textContent("[data-tab=chat] .message.assistant:last-child .muted")).toBe("");
        // A loaded model: no note at all.
        await page.fill("[data-tab=chat] textarea[name=prompt]", "again");
        await page.click("[data-tab=chat] button[type=submit]");
        await page.locator("[data-tab=chat] .message.assistant:last-child .stats", {hasText: "tokens/s"}).waitFor();
        expect(await page.textContent("[data-tab=chat] .message.assistant:last-child .muted")).toBe("");
        expect(errors).toEqual([]);
        await context.close();
    });

    it("pulls a catalogue model: progress from the events, each file verified, then listed (unloaded) and in the chat tab's picker", async () => {
        const {page, context, errors} = await openPage(browser(), `${server.url}/#models`, outside);
        await modelsReady(page);
        await page.fill("[data-tab=models] input[name=pull]", "tiny-chat");
        await page.click("[data-tab=models] form button[type=submit]");
        await page.locator("[data-role=pull-log]", {hasText: "tiny-chat is ready"}).waitFor();
        const log = await page.$$eval("[data-role=pull-log] li", (items: El[]) => items.map((item) => item.textContent));
        expect(log[0]).toContain("tiny-chat (chat): licence apache-2.0, from test-org/tiny-chat-GGUF");
        expect(log).toContain("tiny-chat.q4.gguf: sha256 verified (catalogue)");
        expect(await page.$eval("[data-role=pull-progress]", (bar: El) => bar.value)).toBe(1);
        expect(await page.textContent("[data-role=pull-state]")).toBe("done");
        await page.waitForSelector(statusCell("tiny-chat", "unloaded"));
        await page.waitForSelector("[data-tab=chat] select[name=model] option[value=tiny-chat]", {state: "attached"});
        expect(await page.textContent("[data-role=pull-error]")).toBe("");
        expect(errors).toEqual([]);
        await context.close();
    });

    it("a pull under way shows its bytes so far; a hub that goes away ends it with the error shown", async () => {
        hub.switches.hangAfter["onnx/model_quantized.onnx"] = 125_000;
        const {page, context, errors} = await openPage(browser(), `${server.url}/#models`, outside);
        await modelsReady(page);
        await page.fill("[data-tab=models] input[name=pull]", "tiny-embed");
        await page.click("[data-tab=models] form button[type=submit]");
        // The hub has sent half the file and holds the rest: the page shows the bytes it has.
        await page.locator("[data-role=pull-state]", {hasText: /model_quantized\.onnx [1-9]/}).waitFor();
        expect(await page.$eval("[data-tab=models] form button[type=submit]", (button: El) => button.disabled)).toBe(true);
        await page.screenshot({path: path.join(screenshots, "models-pull.png"), fullPage: true});
        await hub.close();
        await page.locator("[data-role=pull-error]:not(:empty)").waitFor();
        expect(await page.textContent("[data-role=pull-state]")).toBe("failed");
        expect(await page.textContent("[data-role=pull-error]")).toMatch(/\S/);
        expect((await rowsOf(page)).map((row) => row.id)).not.toContain("tiny-embed");
        expect(errors).toEqual([]);
        await context.close();
    });

    it("made no request beyond this server", () => {
        expect(outside).toEqual([]);
    });
});

describe.skipIf(!haveChromium)("the playground's Models tab with API keys", () => {
    const adminKey = "sk-playground-admin-5d1c";
    const userKey = "sk-playground-user-8e2b";
    let keysDir: string;
    let server: TestServer;
    const fakes = library();
    const outside: string[] = [];
    const withKey = (key: string) => `sessionStorage.setItem("playground.apiKey", ${JSON.stringify(key)})`;

    beforeAll(async () => {
        keysDir = fs.mkdtempSync(path.join(os.tmpdir(), "los-test-"));
        const keysFile = path.join(keysDir, "api-keys.json");
        const created = "2026-01-01T00:00:00.000Z";
        writeApiKeyFile(keysFile, {keys: [{name: "ops", hash: hashApiKey(adminKey), created, role: "admin"}, {name: "app", hash: hashApiKey(userKey), created}]});
        server = await startTestServer({
            models: [model("a"), model("b")], config: {preloadAll: false, memoryBudget: 1024 * mb, keepAliveSeconds: null, apiKeysFile: keysFile},
            factories: {chat: fakes.factory}, estimateBytes: async () => 100 * mb
        });
    }, 60_000);
    afterAll(async () => {
        await server?.stop();
        if (keysDir != null)
            fs.rmSync(keysDir, {recursive: true, force: true});
    });

    it("a user's key sees the list, no Load, Unload or pull, and why", async () => {
        const {page, context, errors} = await openPage(browser(), `${server.url}/#models`, outside, withKey(userKey));
        await modelsReady(page);
        expect((await rowsOf(page)).map((row) => [row.id, row.status, row.action])).toEqual([["a", "unloaded", null], ["b", "unloaded", null]]);
        // No GPU, no VRAM budget: no VRAM bar.
        expect(await page.isHidden("[data-role=vram-bar]")).toBe(true);
        expect(await page.$$eval("[data-tab=models] tbody button", (buttons: El[]) => buttons.length)).toBe(0);
        expect(await page.isVisible("[data-tab=models] input[name=pull]")).toBe(false);
        expect(await page.textContent("[data-role=models-note]")).toBe("Loading, unloading and pulling models needs an administrator's key.");
        expect(errors).toEqual([]);
        await context.close();
    });

    it("an administrator's key gets the controls; a refusal (403, the key now a user's) is shown with the server's message", async () => {
        const {page, context, errors} = await openPage(browser(), `${server.url}/#models`, outside, withKey(adminKey));
        await modelsReady(page);
        expect((await rowsOf(page)).map((row) => row.action)).toEqual(["Load", "Load"]);
        expect(await page.isVisible("[data-tab=models] input[name=pull]")).toBe(true);
        // The page sends the key the tab holds now: a user's.
        await page.evaluate(withKey(userKey));
        await page.click("[data-tab=models] tr[data-model=b] button[data-action=load]");
        await page.locator("[data-role=models-error]", {hasText: "Loading b: The API key 'app' is a user's key"}).waitFor();
        // The list asked for again with that key: no controls any more; nothing was loaded.
        await page.waitForSelector("[data-tab=models] form[hidden]", {state: "attached"});
        expect((await rowsOf(page)).map((row) => [row.status, row.action])).toEqual([["unloaded", null], ["unloaded", null]]);
        expect(fakes.created).toEqual([]);
        expect(errors).toEqual([]);
        expect(outside).toEqual([]);
        await context.close();
    });
});
