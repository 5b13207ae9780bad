import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FakeHub, fixture } from "../download/fakeHub.js";
import { chatFile, hubFiles, testCatalogue } from "../download/fixtures.js";
import { library } from "../support/libraryFakes.js";
import { jsonOf, readSse, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath } from "../support/testModels.js";

// POST /models/pull: the names `npm run download-models` takes, fetched from the loopback stand-in hub the download
// tests use, verified by the downloader itself, progress as SSE, and served at once.
const mb = 1024 ** 2;
const revision = "1".repeat(40);
const onnx = fixture(40_000);
let server: TestServer | undefined;
let hub: FakeHub | undefined;
afterEach(async () => {
    await server?.stop();
    await hub?.close();
    server = hub = undefined;
});

type PullEvent = {model: string, event: string, data: Record<string, unknown>};

/** A server serving one fake chat model ("base"), pulling from a fresh fake hub with the download tests' catalogue. */
async function start(options: {factories?: boolean, config?: Record<string, unknown>} = {}) {
    const catalogue = testCatalogue();
    hub = await new FakeHub([
        ...hubFiles(catalogue),
        {repo: "someone/Tiny-GGUF", revision, path: "tiny-Q4_K_M.gguf", content: fs.readFileSync(tinyChatModelPath)},
        {repo: "someone/embed-onnx", revision, path: "config.json", content: Buffer.from(JSON.stringify({model_type: "bert"}))},
        {repo: "someone/embed-onnx", revision, path: "onnx/model_quantized.onnx", content: onnx.content},
        // A hostile mirror's tree: a file that would land outside the model's folder.
        {repo: "evil/Climb-GGUF", revision, path: "../../climb-Q4_K_M.gguf", content: Buffer.from("GGUF")}
    ]).start();
    hub.pipelineTags["someone/embed-onnx"] = "feature-extraction";
    const fakes = library();
    server = await startTestServer({
        models: [{id: "base", task: "chat", path: tinyChatModelPath}],
        config: {preloadAll: false, memoryBudget: 1024 * mb, keepAliveSeconds: null, ...options.config},
        ...(options.factories !== false ? {factories: {chat: fakes.factory}, estimateBytes: async () => 100 * mb} : {}),
        pull: {hub: {hfEndpoint: hub.url, hfToken: null}, catalogue: () => catalogue, pullRetryDelayMs: 0}
    });
    return {target: server, fakes, hub, catalogue};
}

const pull = (target: TestServer, body: unknown) => fetch(`${target.url}/models/pull`, {
    method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)
});

async function eventsOf(response: Response): Promise<PullEvent[]> {
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    return (await readSse(response)).events.map((event) => JSON.parse(event.data) as PullEvent);
}

describe("POST /models/pull", () => {
    it("pulls a catalogue model by id: progress as SSE, verified, added to the manifest, and served at once", async () => {
        const {target, fakes} = await start();
        const events = await eventsOf(await pull(target, {model: "tiny-chat"}));

        expect(events[0]).toMatchObject({event: "message", data: {message: expect.stringContaining("tiny-chat (chat): licence apache-2.0, from test-org/tiny-chat-GGUF")}});
        const progress = events.filter((event) => event.event === "download_progress").map((event) => event.data["tiny-chat.q4.gguf"] as {done: number, total: number});
        expect(progress[0]).toEqual({done: 0, total: 300_000});
        expect(progress.at(-1)).toEqual({done: 300_000, total: 300_000});
        expect(progress.map((each) => each.done)).toEqual([...progress.map((each) => each.done)].sort((a, b) => a - b));
        expect(events.find((event) => event.event === "file_verified")).toEqual({
            model: "tiny-chat", event: "file_verified", data: {file: "tiny-chat.q4.gguf", bytes: 300_000, verification: "sha256 verified (catalogue)"}
        });
        const finished = events.at(-1)!;
        expect(finished).toMatchObject({model: "tiny-chat", event: "download_finished", data: {
            id: "tiny-chat", object: "model", task: "chat", status: {value: "unloaded"}, aliases: expect.arrayContaining(["gpt-3.5-turbo", "gpt-4o-mini", "tiny-latest"])
        }});

        expect(fs.readFileSync(path.join(target.dir, "tiny-chat/tiny-chat.q4.gguf")).equals(chatFile.content)).toBe(true);
        const manifest = JSON.parse(fs.readFileSync(path.join(target.dir, "models.json"), "utf8"));
        expect(manifest.models.map((entry: {id: string}) => entry.id)).toEqual(["base", "tiny-chat"]);
        expect((await target.client.models.list()).data.map((each) => each.id)).toEqual(["base", "tiny-chat"]);
        // Served by the name the catalogue gives it, loaded on the first request.
        const answer = await target.client.chat.completions.create({model: "gpt-4o-mini", messages: [{role: "user", content: "hi"}]});
        expect(answer.model).toBe("tiny-chat");
        expect(fakes.created).toEqual(["tiny-chat"]);
    });

    it("a task names its default model; a file only the hub has a sha256 for is verified by the hub's", async () => {
        const {target} = await start();
        const events = await eventsOf(await pull(target, {model: "embeddings"}));
        expect(events.filter((event) => event.event === "file_verified").map((event) => [event.data.file, event.data.verification])).toEqual([
            ["config.json", "sha256 verified (hub)"], ["onnx/model_quantized.onnx", "sha256 verified (hub)"]
        ]);
        expect(events.at(-1)).toMatchObject({model: "tiny-embed", event: "download_finished", data: {task: "embeddings"}});
    });

    it("refuses a file no sha256 is known for unless allow_unverified is given, as the downloader does", async () => {
        const {target, hub} = await start();
        hub.switches.linkedEtag = false;
        const refused = await eventsOf(await pull(target, {model: "tiny-embed"}));
        const failure = refused.at(-1)!;
        expect(failure).toMatchObject({model: "tiny-embed", event: "download_failed", data: {error: {type: "server_error", code: "hub_checksum"}}});
        expect((failure.data.error as {message: string}).message).toContain("allow_unverified: true");
        expect(fs.existsSync(path.join(target.dir, "tiny-embed/config.json"))).toBe(false);
        expect((await target.client.models.list()).data.map((each) => each.id)).toEqual(["base"]);

        const accepted = await eventsOf(await pull(target, {model: "tiny-embed", allow_unverified: true}));
        expect(accepted.find((event) => event.event === "file_verified")?.data.verification).toMatch(/^sha256 [0-9a-f]{64} recorded \(NOT verified/);
        expect(accepted.at(-1)).toMatchObject({event: "download_finished", model: "tiny-embed"});
    });

    it("a corrupt download is deleted and fetched again, and says so", async () => {
        const {target, hub} = await start();
        hub.switches.corruptTimes["tiny-chat.q4.gguf"] = 1;
        const events = await eventsOf(await pull(target, {model: "tiny-chat"}));
        expect(events.some((event) => event.event === "message" && String(event.data.message).includes("corrupt download"))).toBe(true);
        expect(events.at(-1)).toMatchObject({event: "download_finished"});
        expect(fs.readFileSync(path.join(target.dir, "tiny-chat/tiny-chat.q4.gguf")).equals(chatFile.content)).toBe(true);
    });

    it("one pull at a time: another meanwhile gets 409; a hub that goes away ends the stream with a download_failed event", async () => {
        const started = await start();
        const {target} = started;
        // The file's first bytes arrive, then the connection hangs: the pull is under way until the hub goes away.
        started.hub.switches.hangAfter["tiny-chat.q4.gguf"] = 1000;
        const first = await pull(target, {model: "tiny-chat"});
        expect(first.status).toBe(200);
        const reader = first.body!.getReader();
        const decoder = new TextDecoder();
        let text = "";
        while (!text.includes("download_progress")) {
            const {value, done} = await reader.read();
            if (done)
                break;
            text += decoder.decode(value, {stream: true});
        }
        const second = await pull(target, {model: "tiny-embed"});
        expect(second.status).toBe(409);
        expect((await jsonOf(second)).error).toMatchObject({code: "pull_in_progress", param: "model", message: "A pull is running ('tiny-chat'): one pull at a time. Try again once it ends."});

        await started.hub.close();
        hub = undefined;
        for (;;) {
            const {value, done} = await reader.read();
            if (done)
                break;
            text += decoder.decode(value, {stream: true});
        }
        const last = JSON.parse(text.trim().split("\n").at(-1)!.replace(/^data: /, "")) as PullEvent;
        expect(last).toMatchObject({model: "tiny-chat", event: "download_failed", data: {error: {code: "hub_network"}}});
        expect(text).toContain("event: error\n");
        expect((await target.client.models.list()).data.map((each) => each.id)).toEqual(["base"]);
    });

    it("answers a name that names nothing, and a bad body, with a plain 4xx naming the field before any event", async () => {
        const {target} = await start();
        const cases: [body: unknown, status: number, param: string, code?: string][] = [
            [{model: "nope"}, 404, "model", "model_not_found"],
            [{model: "nobody/none"}, 404, "model", "model_not_found"],
            [{model: "someone/embed-onnx", dtype: "q9"}, 400, "dtype"],
            [{}, 400, "model"],
            [{model: 7}, 400, "model"],
            [{model: "tiny-chat", allow_unverified: "yes"}, 400, "allow_unverified"]
        ];
        for (const [body, status, param, code] of cases) {
            const response = await pull(target, body);
            expect(response.status, JSON.stringify(body)).toBe(status);
            expect(response.headers.get("content-type")).toMatch(/^application\/json/);
            expect((await jsonOf(response)).error, JSON.stringify(body)).toMatchObject({param, ...(code != null ? {code} : {})});
        }
        expect(fs.existsSync(path.join(target.dir, "tiny-chat"))).toBe(false);
    });
});

describe("a hub that cannot be reached", () => {
    it("a hub repository and a catalogue model get the same message saying what to check", async () => {
        const {target, hub} = await start();
        await hub.close();
        const host = new URL(hub.url).host;
        const cannotReach = `Cannot reach ${host} (ECONNREFUSED): check the network, or set HF_ENDPOINT to a reachable mirror.`;
        // A repository is asked for its tree before the answer starts: a plain 502.
        const repo = await pull(target, {model: "someone/Tiny-GGUF"});
        expect(repo.status).toBe(502);
        expect((await jsonOf(repo)).error).toMatchObject({code: "hub_network", message: `Pulling 'someone/Tiny-GGUF': ${cannotReach}`});
        // A catalogue model's files are fetched once the stream has started: its error event.
        const catalogue = await eventsOf(await pull(target, {model: "tiny-chat"}));
        expect(catalogue.at(-1)).toMatchObject({event: "download_failed", data: {error: {code: "hub_network", message: `Pulling 'tiny-chat': ${cannotReach}`}}});
    });
});

describe("a pull cut by the server's shutdown", () => {
    it("stops at the shutdown timeout keeping what was fetched (.part); the next pull after a restart resumes it, verified", async () => {
        const started = await start({config: {shutdownTimeoutMs: 200}});
        const first = started.target;
        const modelsDir = first.dir;
        try {
            // 1,000 bytes of the file arrive, then the hub hangs: the pull is under way when the server shuts down.
            started.hub.switches.hangAfter["tiny-chat.q4.gguf"] = 1000;
            const response = await pull(first, {model: "tiny-chat"});
            const part = path.join(modelsDir, "tiny-chat", "tiny-chat.q4.gguf.part");
            while (!fs.existsSync(part) || fs.statSync(part).size < 1000)
                await new Promise((resolve) => setTimeout(resolve, 10));
            // The shutdown waits for in-flight requests (--shutdown-timeout), then stops them: the pull stops too.
            await first.close();
            server = undefined;
            // The download let go of the hub: nothing keeps fetching into the .part after the server stopped.
            await started.hub.hangsClosed.get("tiny-chat.q4.gguf");
            const events = await eventsOf(response);
            // Its stream ends as every stream does at the shutdown timeout: with the shutdown's error.
            expect(events.at(-1)).toMatchObject({model: "tiny-chat", event: "download_failed", data: {error: {code: "server_shutting_down"}}});
            expect(fs.statSync(part).size).toBe(1000);
            expect(fs.existsSync(path.join(modelsDir, "tiny-chat", "tiny-chat.q4.gguf"))).toBe(false);

            // The next start, on the same manifest and folder: the pull asks for the rest only, and checks the whole file.
            delete started.hub.switches.hangAfter["tiny-chat.q4.gguf"];
            const requestsBefore = started.hub.contentRequests("tiny-chat.q4.gguf").length;
            server = await startTestServer({
                models: [], config: {preloadAll: false, memoryBudget: 1024 * mb, keepAliveSeconds: null, modelsConfig: path.join(modelsDir, "models.json")},
                factories: {chat: library().factory}, estimateBytes: async () => 100 * mb,
                pull: {hub: {hfEndpoint: started.hub.url, hfToken: null}, catalogue: () => started.catalogue, pullRetryDelayMs: 0}
            });
            const resumed = await eventsOf(await pull(server, {model: "tiny-chat"}));
            expect(started.hub.contentRequests("tiny-chat.q4.gguf").slice(requestsBefore).map((request) => [request.status, request.range]))
                .toEqual([[206, "bytes=1000-"]]);
            expect(resumed).toContainEqual(expect.objectContaining({event: "file_verified", data: expect.objectContaining({bytes: 300000, verification: "sha256 verified (catalogue)"})}));
            expect(resumed.at(-1)).toMatchObject({model: "tiny-chat", event: "download_finished"});
            expect(fs.readFileSync(path.join(modelsDir, "tiny-chat", "tiny-chat.q4.gguf")).equals(chatFile.content)).toBe(true);
            expect(fs.existsSync(part)).toBe(false);
        } finally {
            fs.rmSync(modelsDir, {recursive: true, force: true});
        }
    });
});

describe("a hub that names unsafe paths", () => {
    it("is refused before any byte is fetched: no file lands outside the models folder", async () => {
        const {target, hub} = await start();
        const response = await pull(target, {model: "evil/Climb-GGUF"});
        expect(response.status).toBe(502);
        expect((await jsonOf(response)).error).toMatchObject({code: "hub_unsafe_path", message: expect.stringContaining("'../../climb-Q4_K_M.gguf'")});
        expect(hub.requests.filter((request) => request.file != null)).toEqual([]);
        expect(fs.existsSync(path.join(target.dir, "..", "climb-Q4_K_M.gguf"))).toBe(false);
    });
});

describe("a pulled GGUF from the hub, on the real engine", () => {
    it("owner/repo picks its Q4_K_M file, pinned and verified, and the model answers a chat request", async () => {
        const {target} = await start({factories: false});
        const events = await eventsOf(await pull(target, {model: "someone/Tiny-GGUF"}));
        // The sha256 of the hub's file tree (its LFS pointer) is pinned into the entry, as `download-models -- owner/repo` does.
        expect(events.find((event) => event.event === "file_verified")?.data).toMatchObject({file: "tiny-Q4_K_M.gguf", verification: "sha256 verified (catalogue)"});
        expect(events.at(-1)).toMatchObject({model: "tiny-q4_k_m", event: "download_finished", data: {task: "chat", status: {value: "unloaded"}}});
        expect(fs.readFileSync(path.join(target.dir, "tiny-q4_k_m/tiny-Q4_K_M.gguf")).equals(fs.readFileSync(tinyChatModelPath))).toBe(true);
        const answer = await target.client.chat.completions.create({model: "tiny-q4_k_m", messages: [{role: "user", content: "hi"}], max_tokens: 4});
        expect(answer.model).toBe("tiny-q4_k_m");
        expect(answer.usage?.completion_tokens).toBeGreaterThan(0);
        expect((await jsonOf(await fetch(`${target.url}/v1/models/tiny-q4_k_m`))).status.value).toBe("loaded");
    });
});
