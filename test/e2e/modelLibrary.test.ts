import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { gate, library, libraryModel, mb, startLibraryServer, type LibraryServerOptions } from "../support/libraryFakes.js";
import { ManualClock } from "../support/ManualClock.js";
import { jsonOf, readSse, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath } from "../support/testModels.js";

let server: TestServer | undefined;
afterEach(async () => {
    await server?.stop();
    server = undefined;
});

const model = libraryModel;
const chat = (target: TestServer, name: string, init?: RequestInit) => target.post("/v1/chat/completions", {model: name, messages: [{role: "user", content: "hi"}]}, init);
const statusOf = async (target: TestServer, id: string) => (await jsonOf(await fetch(`${target.url}/v1/models/${id}`))).status;

async function metricsOf(target: TestServer) {
    return (await fetch(`${target.url}/metrics`)).text();
}

async function start(fakes: ReturnType<typeof library>, options: LibraryServerOptions) {
    return server = await startLibraryServer(fakes, options);
}

describe("the model library: models load when first asked for", () => {
    it("registers every model at start without loading one; the first request loads it and is served", async () => {
        const fakes = library();
        const target = await start(fakes, {models: [model("a"), model("b")]});
        expect(fakes.created).toEqual([]);
        expect((await fetch(`${target.url}/health/ready`)).status).toBe(200);
        const listed = (await jsonOf(await fetch(`${target.url}/v1/models`))).data;
        expect(listed.map((entry: {id: string, status: {value: string}}) => [entry.id, entry.status.value])).toEqual([["a", "unloaded"], ["b", "unloaded"]]);

        const response = await chat(target, "a");
        expect(response.status).toBe(200);
        expect((await jsonOf(response)).choices[0].message.content).toBe("hello there");
        expect(fakes.created).toEqual(["a"]);
        expect(await statusOf(target, "a")).toMatchObject({value: "loaded", estimated_bytes: 100 * mb, keep_alive: "forever", pinned: false, preload: false});
        expect((await statusOf(target, "a")).last_used).toEqual(expect.any(Number));
        expect(await statusOf(target, "b")).toMatchObject({value: "unloaded", estimated_bytes: null, last_used: null});
        expect(await metricsOf(target)).toMatch(/los_model_loads_total\{model="a",result="ok"\} 1\n/);
    });

    it("concurrent first requests share one load; a streamed one gets its first byte only once the model is ready", async () => {
        const fakes = library();
        const load = gate();
        fakes.loadGates.set("a", load.opened);
        const target = await start(fakes, {models: [model("a")]});
        const plain = [chat(target, "a"), chat(target, "a")];
        const streamed = target.post("/v1/chat/completions", {model: "a", stream: true, messages: [{role: "user", content: "hi"}]});
        await fakes.loadStarted("a");
        expect(await statusOf(target, "a")).toMatchObject({value: "loading"});
        load.open();
        for (const response of await Promise.all(plain))
            expect((await jsonOf(response)).choices[0].message.content).toBe("hello there");
        const {events} = await readSse(await streamed);
        expect(events.at(-1)!.data).toBe("[DONE]");
        expect(fakes.created).toEqual(["a"]);
    });

    it("a client that goes away while its model loads cancels nothing else: the load goes on for the others", async () => {
        const fakes = library();
        const load = gate();
        fakes.loadGates.set("a", load.opened);
        const target = await start(fakes, {models: [model("a")]});
        const leaving = new AbortController();
        const gone = chat(target, "a", {signal: leaving.signal});
        const staying = chat(target, "a");
        await fakes.loadStarted("a");
        leaving.abort();
        await expect(gone).rejects.toThrow();
        load.open();
        expect((await staying).status).toBe(200);
        expect(fakes.created).toEqual(["a"]);
        expect(await statusOf(target, "a")).toMatchObject({value: "loaded"});
    });

    it("preloaded models (manifest `preload`) are loaded at start, the others when asked for", async () => {
        const fakes = library();
        // No --keep-alive given: 5 minutes, a preloaded model forever.
        const target = await start(fakes, {models: [model("warm", {preload: true}), model("cold")], config: {keepAliveSeconds: undefined}});
        expect(fakes.created).toEqual(["warm"]);
        // Kept (keep-alive forever, unless a keep-alive is given): it was loaded at start to be warm.
        expect(await statusOf(target, "warm")).toMatchObject({value: "loaded", preload: true, keep_alive: "forever"});
        expect(await statusOf(target, "cold")).toMatchObject({value: "unloaded", preload: false, keep_alive: "5m"});
    });

    it("a --keep-alive given wins over the forever of --preload-all (and of a manifest `preload`); a manifest `keepAlive` over both", async () => {
        const fakes = library();
        const models = [model("a"), model("b", {preload: true}), model("c", {keepAlive: "30s"})];
        let target = await start(fakes, {models, config: {preloadAll: true, keepAliveSeconds: 600}});
        expect(fakes.created).toEqual(["a", "b", "c"]);
        expect(await Promise.all(["a", "b", "c"].map(async (id) => (await statusOf(target, id)).keep_alive))).toEqual(["10m", "10m", "30s"]);
        await target.stop();
        target = await start(fakes, {models, config: {preloadAll: true, keepAliveSeconds: undefined}});
        expect(await Promise.all(["a", "b", "c"].map(async (id) => (await statusOf(target, id)).keep_alive))).toEqual(["forever", "forever", "30s"]);
    });
});

describe("the memory budget, in bytes", () => {
    it("evicts idle models, least recently used first, when a load does not fit, and says why in /metrics and the log", async () => {
        const fakes = library();
        const clock = new ManualClock();
        const logLines: string[] = [];
        server = await startTestServer({
            models: [model("a"), model("b"), model("c")], logLines,
            config: {preloadAll: false, memoryBudget: 250 * mb, keepAliveSeconds: null, logLevel: "info"},
            factories: {chat: fakes.factory}, estimateBytes: async () => 100 * mb, clock
        });
        const target = server;
        expect((await chat(target, "a")).status).toBe(200);
        clock.advance(1000);
        expect((await chat(target, "b")).status).toBe(200);
        clock.advance(1000);
        // `a` is used again: `b` is now the least recently used.
        expect((await chat(target, "a")).status).toBe(200);
        clock.advance(1000);
        expect((await chat(target, "c")).status).toBe(200);
        expect(fakes.disposed).toEqual(["b"]);
        expect(await statusOf(target, "b")).toMatchObject({value: "unloaded"});
        expect(await statusOf(target, "a")).toMatchObject({value: "loaded"});
        const metrics = await metricsOf(target);
        expect(metrics).toMatch(/los_model_evictions_total\{model="b",reason="memory"\} 1\n/);
        expect(metrics).toMatch(new RegExp(`los_memory_budget_bytes ${250 * mb}\\n`));
        expect(metrics).toMatch(new RegExp(`los_memory_in_use_bytes ${200 * mb}\\n`));
        expect(metrics).toMatch(new RegExp(`los_model_memory_bytes\\{model="c"\\} ${100 * mb}\\n`));
        expect(logLines.some((line) => line.includes("Unloaded 'b': to make room for 'c'") && line.includes('reason="memory"'))).toBe(true);
    });

    it("never evicts a busy model: a request for another waits, and is served once the first request ends", async () => {
        const fakes = library();
        const clock = new ManualClock();
        const release = gate();
        fakes.pieceGates.set("a", release.opened);
        const target = await start(fakes, {models: [model("a"), model("b")], budget: 150 * mb, clock});
        const first = target.post("/v1/chat/completions", {model: "a", stream: true, messages: [{role: "user", content: "hi"}]});
        const firstResponse = await first;
        expect(firstResponse.status).toBe(200);
        const second = chat(target, "b");
        // `b`'s load waits for memory: its wait sets a timer (the poll of engines' load, bounded by the timeout).
        await clock.timersPending(1);
        expect(await statusOf(target, "b")).toMatchObject({value: "loading"});
        expect(fakes.created).toEqual(["a"]);
        release.open();
        await readSse(firstResponse);
        expect((await second).status).toBe(200);
        expect(fakes.created).toEqual(["a", "b"]);
        expect(fakes.disposed).toEqual(["a"]);
    });

    it("answers 503 with Retry-After naming the models holding the memory, each as it is (busy, idle), when they stay busy past the wait", async () => {
        const fakes = library();
        const clock = new ManualClock();
        const release = gate();
        fakes.pieceGates.set("a", release.opened);
        const target = await start(fakes, {
            models: [model("a"), model("story"), model("b")], budget: 250 * mb, clock, config: {memoryWaitSeconds: 10}, estimates: {story: 42 * mb, b: 200 * mb}
        });
        expect((await chat(target, "story")).status).toBe(200);
        const firstResponse = await target.post("/v1/chat/completions", {model: "a", stream: true, messages: [{role: "user", content: "hi"}]});
        // Evicting the idle 'story' alone would not make room; once 'a' ends, both may go: the load waits.
        const second = chat(target, "b");
        await clock.timersPending(1);
        clock.advance(10_000);
        const refused = await second;
        expect(refused.status).toBe(503);
        expect(refused.headers.get("retry-after")).toBe("5");
        const {error} = await jsonOf(refused);
        expect(error.code).toBe("model_memory_busy");
        expect(error.message).toBe("Model 'b' needs about 200 MB of memory; 108 MB of the 250 MB budget is free, and the rest is held by " +
            "'a' (100 MB, busy: 1 request running or waiting), 'story' (42 MB, idle). Retry later.");
        expect(fakes.created).toEqual(["story", "a"]);
        release.open();
        await readSse(firstResponse);
        // The wait is over for this request only: the next one gets the memory `a` no longer needs.
        expect((await chat(target, "b")).status).toBe(200);
    });

    it("never evicts a pinned model, and answers at once when only pinned models hold what it lacks: no wait would free it", async () => {
        const fakes = library();
        const clock = new ManualClock();
        const target = await start(fakes, {models: [model("a", {pin: true}), model("b")], budget: 150 * mb, clock});
        expect((await chat(target, "a")).status).toBe(200);
        // No timer, no wait for memory (30 s here): the clock never moves.
        const refused = await chat(target, "b");
        expect(refused.status).toBe(503);
        expect(refused.headers.get("retry-after")).toBe("5");
        expect((await jsonOf(refused)).error).toMatchObject({
            code: "model_memory_busy",
            message: "Model 'b' needs about 100 MB of memory; 50 MB of the 150 MB budget is free, and the rest is held by 'a' (100 MB, pinned); " +
                "evicting every model that may be evicted for it would not free enough. Retry later."
        });
        expect(clock.pending).toBe(0);
        expect(fakes.disposed).toEqual([]);
        expect(await statusOf(target, "a")).toMatchObject({value: "loaded", pinned: true});
    });

    it("refuses at once a model larger than the whole budget, saying how much it needs and how much there is", async () => {
        const fakes = library();
        const target = await start(fakes, {models: [model("huge"), model("small")], budget: 150 * mb, estimates: {huge: 3 * 1024 ** 3}});
        const refused = await chat(target, "huge");
        expect(refused.status).toBe(503);
        expect(refused.headers.get("retry-after")).toBeNull();
        expect(refused.headers.get("x-should-retry")).toBe("false");
        expect((await jsonOf(refused)).error).toMatchObject({
            code: "model_too_large",
            message: "Model 'huge' needs about 3.00 GB of memory, more than the server's whole budget of 150 MB (--memory-budget). " +
                "Its estimate counts its context: tokens per sequence (the manifest's `contextSize`, else --context-size, else the model's training context, " +
                "or the largest that fits the budget, at least 4,096) times its sequences (--parallel)."
        });
        expect(fakes.created).toEqual([]);
        expect(await statusOf(target, "huge")).toMatchObject({value: "failed"});
        expect((await chat(target, "small")).status).toBe(200);

        // The openai client, which retries a 503 twice by default, asks once.
        let requests = 0;
        const client = new OpenAI({baseURL: `${target.url}/v1`, apiKey: "none", fetch: (url, init) => {
            requests++;
            return fetch(url, init);
        }});
        const error = await client.chat.completions.create({model: "huge", messages: [{role: "user", content: "hi"}]}).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(OpenAI.APIError);
        expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
        expect(requests).toBe(1);
    });
});

describe("keep-alive", () => {
    it("unloads a model idle for its keep-alive, and loads it again on the next request", async () => {
        const fakes = library();
        const clock = new ManualClock();
        const target = await start(fakes, {models: [model("a", {keepAlive: "1m"}), model("b")], clock});
        expect((await chat(target, "a")).status).toBe(200);
        await clock.timersPending(1);
        clock.advance(59_000);
        expect(await statusOf(target, "a")).toMatchObject({value: "loaded", keep_alive: "1m"});
        clock.advance(1000);
        expect(fakes.disposed).toEqual(["a"]);
        expect(await statusOf(target, "a")).toMatchObject({value: "unloaded"});
        expect(await metricsOf(target)).toMatch(/los_model_evictions_total\{model="a",reason="idle"\} 1\n/);
        // `b` has no keep-alive of its own: the server's (here forever) applies.
        expect((await chat(target, "b")).status).toBe(200);
        expect(clock.pending).toBe(0);

        expect((await chat(target, "a")).status).toBe(200);
        expect(fakes.created).toEqual(["a", "b", "a"]);
    });

    it("a model still at work when its keep-alive ends is not unloaded", async () => {
        const fakes = library();
        const clock = new ManualClock();
        const release = gate();
        fakes.pieceGates.set("a", release.opened);
        const target = await start(fakes, {models: [model("a", {keepAlive: 0})], clock});
        const streamed = await target.post("/v1/chat/completions", {model: "a", stream: true, messages: [{role: "user", content: "hi"}]});
        clock.advance(60_000);
        expect(await statusOf(target, "a")).toMatchObject({value: "loaded"});
        release.open();
        await readSse(streamed);
        await clock.timersPending(1);
        clock.advance(0);
        expect(fakes.disposed).toEqual(["a"]);
    });
});

describe("failures are per model", () => {
    it("a model that fails to load answers with the reason and is tried again after a backoff; the others keep serving", async () => {
        const fakes = library();
        const clock = new ManualClock();
        fakes.failures.set("broken", new Error("Invalid GGUF magic"));
        const target = await start(fakes, {models: [model("broken"), model("good")], clock});
        const failed = await chat(target, "broken");
        expect(failed.status).toBe(503);
        expect(failed.headers.get("retry-after")).toBe("5");
        expect((await jsonOf(failed)).error).toMatchObject({
            code: "model_load_failed",
            message: `Model 'broken' failed to load from ${tinyChatModelPath}: Invalid GGUF magic. It will be loaded again by a request after 5 s.`
        });
        expect((await chat(target, "good")).status).toBe(200);
        expect(await statusOf(target, "broken")).toMatchObject({value: "failed", error: `Model 'broken' failed to load from ${tinyChatModelPath}: Invalid GGUF magic`});
        expect((await fetch(`${target.url}/health/ready`)).status).toBe(200);

        // Within the backoff: answered at once, no new load.
        expect((await chat(target, "broken")).status).toBe(503);
        expect(fakes.created).toEqual(["broken", "good"]);
        // After it: loaded again (fixed now), and served.
        clock.advance(5000);
        fakes.failures.delete("broken");
        expect((await chat(target, "broken")).status).toBe(200);
        expect(fakes.created).toEqual(["broken", "good", "broken"]);
        expect(await metricsOf(target)).toMatch(/los_model_loads_total\{model="broken",result="failed"\} 1\n/);
    });

    it("a preloaded model that fails makes /health/ready 503 'failed' while the others serve, and is retried after its backoff", async () => {
        const {fakes, clock, target} = await startWithBrokenPreload();
        await expect(target.ready).rejects.toThrow(`Model 'broken' failed to load from ${tinyChatModelPath}: out of memory`);
        expect(await jsonOf(await fetch(`${target.url}/health/ready`))).toEqual({status: "unavailable", reason: "failed"});
        expect((await chat(target, "good")).status).toBe(200);
        fakes.failures.delete("broken");
        clock.advance(5000);
        await eventuallyReady(target);
        expect(fakes.created).toEqual(["broken", "good", "broken"]);
    });
});

/** Every model preloaded, 'broken' failing to load ("out of memory") until the test says otherwise, 'good' fine. */
async function startWithBrokenPreload() {
    const fakes = library();
    const clock = new ManualClock();
    fakes.failures.set("broken", new Error("out of memory"));
    const target = server = await startTestServer({
        models: [model("broken"), model("good")], waitUntilReady: false,
        config: {preloadAll: true, keepAliveSeconds: null}, factories: {chat: fakes.factory}, estimateBytes: async () => mb, clock
    });
    return {fakes, clock, target};
}

describe("a preloaded model's failure and retry", () => {
    it("a request during its backoff gets the failure and does not stop its retry; while the retry loads it, /health/ready stays 503", async () => {
        const {fakes, clock, target} = await startWithBrokenPreload();
        await expect(target.ready).rejects.toThrow("out of memory");
        // A request in the backoff: the failure, and the retry is still armed.
        expect((await jsonOf(await chat(target, "broken"))).error.code).toBe("model_load_failed");
        fakes.failures.delete("broken");
        const load = gate();
        fakes.loadGates.set("broken", load.opened);
        clock.advance(5000);
        await fakes.loadStarted("broken");
        // The retry is loading it: not ready yet.
        expect(await jsonOf(await fetch(`${target.url}/health/ready`))).toEqual({status: "unavailable", reason: "failed"});
        load.open();
        await eventuallyReady(target);
        expect(fakes.created).toEqual(["broken", "good", "broken"]);
    });

    it("a request's load of a preloaded model that finds no room gets model_memory_busy, and the model is not failed", async () => {
        const fakes = library();
        const clock = new ManualClock();
        server = await startTestServer({
            models: [model("warm", {preload: true}), model("cold")], waitUntilReady: true,
            config: {preloadAll: false, memoryBudget: 150 * mb, memoryWaitSeconds: 0, keepAliveSeconds: null},
            factories: {chat: fakes.factory}, estimateBytes: async () => 100 * mb, clock
        });
        const target = server;
        // 'cold' takes the memory (evicting the idle 'warm') and stays busy, streaming.
        const release = gate();
        fakes.pieceGates.set("cold", release.opened);
        const held = await target.post("/v1/chat/completions", {model: "cold", stream: true, messages: [{role: "user", content: "hi"}]});
        expect(held.status).toBe(200);
        const refused = await chat(target, "warm");
        expect(refused.status).toBe(503);
        expect((await jsonOf(refused)).error.code).toBe("model_memory_busy");
        expect(await statusOf(target, "warm")).toMatchObject({value: "unloaded"});
        expect((await fetch(`${target.url}/health/ready`)).status).toBe(200);
        release.open();
        await readSse(held);
        expect((await chat(target, "warm")).status).toBe(200);
    });

    it("a retry that comes while another load of the model runs, which then finds no room, is armed again", async () => {
        const fakes = library();
        const clock = new ManualClock();
        fakes.failures.set("p", new Error("out of memory"));
        const target = server = await startTestServer({
            models: [model("p", {preload: true}), model("busy")], waitUntilReady: false,
            config: {preloadAll: false, memoryBudget: 150 * mb, memoryWaitSeconds: 10, keepAliveSeconds: null},
            factories: {chat: fakes.factory}, estimateBytes: async () => 100 * mb, clock
        });
        await expect(target.ready).rejects.toThrow("out of memory");
        fakes.failures.delete("p");
        // 'busy' holds the memory, streaming; an administrator's load of 'p' waits for room.
        const release = gate();
        fakes.pieceGates.set("busy", release.opened);
        const held = await target.post("/v1/chat/completions", {model: "busy", stream: true, messages: [{role: "user", content: "hi"}]});
        const adminLoad = target.post("/models/load", {model: "p"});
        await eventually(() => fakes.created.length === 2);
        await clock.timersPending(2);
        // The retry's time comes while that load waits: it leaves 'p' to it; the wait ends without room.
        clock.advance(5000);
        clock.advance(10_000);
        expect((await adminLoad).status).toBe(503);
        release.open();
        await readSse(held);
        // Tried again by itself once more: loaded, and the server is ready.
        await clock.timersPending(1);
        clock.advance(60_000);
        await eventuallyReady(target);
        expect(await statusOf(target, "p")).toMatchObject({value: "loaded"});
    });

    it("a preloaded model whose estimate cannot be read failed to load: retried, /health/ready 503 until it loads", async () => {
        const fakes = library();
        const clock = new ManualClock();
        let unreadable = true;
        const target = server = await startTestServer({
            models: [model("p", {preload: true})], waitUntilReady: false, config: {preloadAll: false, keepAliveSeconds: null},
            factories: {chat: fakes.factory}, clock,
            estimateBytes: async () => {
                if (unreadable)
                    throw new Error("EIO: i/o error, read");
                return mb;
            }
        });
        await expect(target.ready).rejects.toThrow("EIO: i/o error, read");
        expect(await jsonOf(await fetch(`${target.url}/health/ready`))).toEqual({status: "unavailable", reason: "failed"});
        unreadable = false;
        clock.advance(5000);
        await eventuallyReady(target);
    });

    it("a preloaded model's keep-alive counts from its first use: with keep-alive 0 it stays loaded until a request used it", async () => {
        const fakes = library();
        const clock = new ManualClock();
        server = await startTestServer({
            models: [model("a"), model("b")], waitUntilReady: true,
            config: {preloadAll: true, keepAliveSeconds: 0}, factories: {chat: fakes.factory}, estimateBytes: async () => mb, clock
        });
        const target = server;
        clock.advance(60_000);
        expect([await statusOf(target, "a"), await statusOf(target, "b")]).toMatchObject([{value: "loaded"}, {value: "loaded"}]);
        expect((await chat(target, "a")).status).toBe(200);
        // Used: its keep-alive (0) runs from the end of that request.
        await clock.timersPending(1);
        clock.advance(1);
        await eventually(() => fakes.disposed.includes("a"));
        expect(await statusOf(target, "b")).toMatchObject({value: "loaded"});
    });
});

describe("preloaded models that do not fit the budget together", () => {
    /** Two preloaded models of 109 MB each in a 200 MB budget, as the manifest lists them. */
    async function startBig(fakes: ReturnType<typeof library>, clock: ManualClock, logLines: string[], extra: Record<string, unknown>) {
        return server = await startTestServer({
            models: [model("big-a", {preload: true, ...extra}), model("big-b", {preload: true, ...extra}), model("small")], logLines, waitUntilReady: false,
            config: {preloadAll: false, memoryBudget: 200 * mb, keepAliveSeconds: null, logLevel: "info"},
            factories: {chat: fakes.factory}, estimateBytes: async (entry) => entry.id === "small" ? 10 * mb : 109 * mb, clock
        });
    }
    const shortfall = (holder: string) => "Model 'big-b' needs about 109 MB of memory; 91 MB of the 200 MB budget is free, and the rest is held by " +
        `'big-a' (109 MB, ${holder}); evicting every model that may be evicted for it would not free enough.`;
    const overBudget = "The preloaded models do not fit the budget together: 'big-a' (109 MB), 'big-b' (109 MB) need about 218 MB of memory, " +
        "the budget is 200 MB (--memory-budget).";

    it("pinned: the one that finds no room fails (logged with who holds the memory), keeps /health/ready at 503 'failed', and is tried again on its backoff", async () => {
        const fakes = library();
        const clock = new ManualClock();
        const logLines: string[] = [];
        const target = await startBig(fakes, clock, logLines, {pin: true});
        await expect(target.ready).rejects.toThrow(shortfall("pinned"));
        expect(await jsonOf(await fetch(`${target.url}/health/ready`))).toEqual({status: "unavailable", reason: "failed"});
        expect(await statusOf(target, "big-b")).toMatchObject({value: "failed", error: shortfall("pinned"), retry_at: expect.any(Number)});
        const failures = () => logLines.filter((line) => line.includes(shortfall("pinned")));
        expect(failures()).toEqual([expect.stringContaining("retry_in_s=5")]);
        expect(logLines.filter((line) => line.includes(overBudget))).toHaveLength(1);

        // Tried again by itself on the backoff (5 s, then 10 s), without a request.
        clock.advance(5000);
        await eventually(() => failures().length === 2);
        expect(failures()[1]).toContain("retry_in_s=10");
        // The others serve meanwhile.
        expect((await chat(target, "small")).status).toBe(200);
        // Once the memory is there, it loads, and the server is ready.
        expect((await target.post("/models/unload", {model: "big-a"})).status).toBe(200);
        clock.advance(10_000);
        await eventuallyReady(target);
        expect(await statusOf(target, "big-b")).toMatchObject({value: "loaded"});
        expect(fakes.created).toEqual(["big-a", "small", "big-b"]);
    });

    it("not pinned: the preload evicts no preloaded model for another (it fails instead, said once at start); a request may", async () => {
        const fakes = library();
        const clock = new ManualClock();
        const logLines: string[] = [];
        const target = await startBig(fakes, clock, logLines, {});
        await expect(target.ready).rejects.toThrow(shortfall("preloaded"));
        expect(logLines.some((line) => line.includes("to make room"))).toBe(false);
        expect(logLines.filter((line) => line.includes(overBudget))).toHaveLength(1);
        expect(fakes.disposed).toEqual([]);
        expect(await statusOf(target, "big-a")).toMatchObject({value: "loaded"});
        expect(await statusOf(target, "big-b")).toMatchObject({value: "failed", error: shortfall("preloaded")});
        expect(await jsonOf(await fetch(`${target.url}/health/ready`))).toEqual({status: "unavailable", reason: "failed"});
        // Its retry does not evict 'big-a' either.
        clock.advance(5000);
        await eventually(() => logLines.filter((line) => line.includes(shortfall("preloaded"))).length === 2);
        expect(fakes.disposed).toEqual([]);
        // An administrator's load (as a request's) evicts the idle one as usual: a preloaded model that is not pinned may go.
        expect((await target.post("/models/load", {model: "big-b"})).status).toBe(200);
        expect(fakes.disposed).toEqual(["big-a"]);
    });
});

/** Waits (turns of the event loop, never time) until `done` holds. */
async function eventually(done: () => boolean) {
    for (let attempt = 0; attempt < 100; attempt++) {
        if (done())
            return;
        await new Promise((resolve) => setImmediate(resolve));
    }
    throw new Error("never happened");
}

async function eventuallyReady(target: TestServer) {
    for (let attempt = 0; attempt < 100; attempt++) {
        if ((await fetch(`${target.url}/health/ready`)).status === 200)
            return;
        await new Promise((resolve) => setImmediate(resolve));
    }
    throw new Error("never ready");
}
