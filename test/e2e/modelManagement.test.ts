import { afterEach, describe, expect, it } from "vitest";
import { gate, library, libraryModel, mb, startLibraryServer } from "../support/libraryFakes.js";
import { ManualClock } from "../support/ManualClock.js";
import { jsonOf, readSse, type TestServer } from "../support/startTestServer.js";

// The management API (docs/models.md "The management API"): GET /models, POST /models/load and /models/unload in
// llama-server's router-mode shapes, against fake engines (the model does not matter here) and a fake clock.
let server: TestServer | undefined;
afterEach(async () => {
    await server?.stop();
    server = undefined;
});

const model = libraryModel;

async function start(fakes: ReturnType<typeof library>, models: Record<string, unknown>[], options: {budget?: number, clock?: ManualClock, keepAlive?: number | null} = {}) {
    return server = await startLibraryServer(fakes, {models, budget: options.budget, clock: options.clock ?? new ManualClock(), config: {keepAliveSeconds: options.keepAlive ?? null}});
}

const post = (target: TestServer, route: string, body: unknown) => fetch(`${target.url}${route}`, {
    method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)
});
const listed = async (target: TestServer) => (await jsonOf(await fetch(`${target.url}/models`))).data as {id: string, status: {value: string}}[];
const statusOf = async (target: TestServer, id: string) => (await listed(target)).find((each) => each.id === id)!.status;

describe("GET /models", () => {
    it("lists every model with its status in llama-server's shape ({data: [{id, status: {value}}]}), as /v1/models does, and whether the caller may manage them", async () => {
        const fakes = library();
        const clock = new ManualClock();
        const target = await start(fakes, [model("a", {aliases: ["gpt-4o-mini"], keepAlive: "10m"}), model("b", {pin: true})], {clock});
        const {can_manage: canManage, memory, ...list} = await jsonOf(await fetch(`${target.url}/models`));
        expect(list).toEqual(await jsonOf(await fetch(`${target.url}/v1/models`)));
        // The budget and what the models hold of it (nothing loaded yet), for a page's memory bar.
        expect(memory).toEqual({budget_bytes: 1024 * mb, in_use_bytes: 0, vram_budget_bytes: 0, vram_in_use_bytes: 0});
        // Without keys (loopback only) everyone may manage models.
        expect(canManage).toBe(true);
        expect(list.data.map((each: {id: string, status: unknown}) => [each.id, each.status])).toEqual([
            ["a", {value: "unloaded", estimated_bytes: null, estimated_vram_bytes: null, measured_bytes: null, last_used: null, keep_alive: "10m", pinned: false, preload: false}],
            ["b", {value: "unloaded", estimated_bytes: null, estimated_vram_bytes: null, measured_bytes: null, last_used: null, keep_alive: "forever", pinned: true, preload: false}]
        ]);
        expect(fakes.created).toEqual([]);
    });
});

describe("GET /models while a model loads", () => {
    it("shows how far the load is as llama-server's router does (status.progress {stages, current, value}), and none once loaded", async () => {
        const fakes = library();
        const loading = gate();
        fakes.loadGates.set("a", loading.opened);
        fakes.loadProgress.set("a", [0.1, 0.42]);
        const target = await start(fakes, [model("a"), model("b")]);
        const load = post(target, "/models/load", {model: "a"});
        await fakes.loadStarted("a");
        expect(await statusOf(target, "a")).toMatchObject({value: "loading", progress: {stages: ["text_model"], current: "text_model", value: 0.42}});
        // A model not loading has none.
        expect(await statusOf(target, "b")).not.toHaveProperty("progress");
        loading.open();
        expect((await load).status).toBe(200);
        expect(await statusOf(target, "a")).not.toHaveProperty("progress");
    });
});

describe("POST /models/load", () => {
    it("loads the model named (id or alias) and answers once it is loaded, with its status", async () => {
        const fakes = library();
        const clock = new ManualClock();
        const target = await start(fakes, [model("a", {aliases: ["gpt-4o-mini"]}), model("b")], {clock});
        const response = await post(target, "/models/load", {model: "gpt-4o-mini"});
        expect(response.status).toBe(200);
        const body = await jsonOf(response);
        expect(body.success).toBe(true);
        expect(body.model).toMatchObject({id: "a", object: "model", status: {value: "loaded", estimated_bytes: 100 * mb, last_used: clock.now() / 1000}});
        expect(fakes.created).toEqual(["a"]);
        expect(await statusOf(target, "b")).toMatchObject({value: "unloaded"});
        // Loaded already: nothing more happens.
        expect((await post(target, "/models/load", {model: "a"})).status).toBe(200);
        expect(fakes.created).toEqual(["a"]);
    });

    it("makes room as a request would: the least recently used idle model is evicted", async () => {
        const fakes = library();
        const clock = new ManualClock();
        const target = await start(fakes, [model("a"), model("b"), model("c")], {clock, budget: 250 * mb});
        await post(target, "/models/load", {model: "a"});
        clock.advance(1000);
        await post(target, "/models/load", {model: "b"});
        clock.advance(1000);
        expect((await post(target, "/models/load", {model: "c"})).status).toBe(200);
        expect(fakes.disposed).toEqual(["a"]);
        expect((await listed(target)).map((each) => each.status.value)).toEqual(["unloaded", "loaded", "loaded"]);
    });

    it("tries a failed model again at once, where a request waits for its backoff", async () => {
        const fakes = library();
        fakes.failures.set("a", new Error("file is truncated"));
        const target = await start(fakes, [model("a")]);
        const failed = await post(target, "/models/load", {model: "a"});
        expect(failed.status).toBe(503);
        expect((await jsonOf(failed)).error).toMatchObject({code: "model_load_failed", message: expect.stringContaining("file is truncated")});
        fakes.failures.delete("a");
        // A request within the backoff gets the failure again without a load...
        const request = await post(target, "/v1/chat/completions", {model: "a", messages: [{role: "user", content: "hi"}]});
        expect(request.status).toBe(503);
        expect(fakes.created).toEqual(["a"]);
        // ...an administrator's load tries now.
        expect((await post(target, "/models/load", {model: "a"})).status).toBe(200);
        expect(fakes.created).toEqual(["a", "a"]);
        expect(await statusOf(target, "a")).toMatchObject({value: "loaded"});
    });

    it("answers a bad request with a 400 naming the field, an unknown model with a 404", async () => {
        const fakes = library();
        const target = await start(fakes, [model("a")]);
        for (const body of [{}, {model: 3}, {model: ""}]) {
            const response = await post(target, "/models/load", body);
            expect(response.status).toBe(400);
            expect((await jsonOf(response)).error).toMatchObject({type: "invalid_request_error", param: "model"});
        }
        const unknown = await post(target, "/models/load", {model: "nope"});
        expect(unknown.status).toBe(404);
        expect((await jsonOf(unknown)).error).toMatchObject({code: "model_not_found", param: "model"});
        expect((await post(target, "/models/unload", {model: "nope"})).status).toBe(404);
        expect(fakes.created).toEqual([]);
    });
});

describe("POST /models/unload", () => {
    it("unloads an idle model, answering once its memory is back, and counts it in /metrics as reason admin", async () => {
        const fakes = library();
        const target = await start(fakes, [model("a")]);
        await post(target, "/models/load", {model: "a"});
        expect((await jsonOf(await fetch(`${target.url}/models`))).memory).toEqual({budget_bytes: 1024 * mb, in_use_bytes: 100 * mb, vram_budget_bytes: 0, vram_in_use_bytes: 0});
        const response = await post(target, "/models/unload", {model: "a"});
        expect(response.status).toBe(200);
        expect(await jsonOf(response)).toMatchObject({success: true, model: {id: "a", status: {value: "unloaded"}}});
        expect(fakes.disposed).toEqual(["a"]);
        const metrics = await (await fetch(`${target.url}/metrics`)).text();
        expect(metrics).toMatch(/los_model_evictions_total\{model="a",reason="admin"\} 1\n/);
        expect(metrics).toMatch(/los_memory_in_use_bytes 0\n/);
        // Not loaded: nothing to do, still a success.
        expect((await post(target, "/models/unload", {model: "a"})).status).toBe(200);
        expect(fakes.disposed).toEqual(["a"]);
        // The next request loads it again.
        expect((await post(target, "/v1/chat/completions", {model: "a", messages: [{role: "user", content: "hi"}]})).status).toBe(200);
        expect(fakes.created).toEqual(["a", "a"]);
    });

    it("/metrics has every load's seconds as a Prometheus histogram, beside the last load's gauge", async () => {
        const fakes = library();
        const target = await start(fakes, [model("a"), model("b")]);
        await post(target, "/models/load", {model: "a"});
        await post(target, "/models/unload", {model: "a"});
        await post(target, "/models/load", {model: "a"});
        await post(target, "/models/load", {model: "b"});
        const metrics = await (await fetch(`${target.url}/metrics`)).text();
        expect(metrics).toContain("# TYPE los_model_load_duration_seconds histogram\n");
        expect(metrics).toMatch(/los_model_load_duration_seconds_count\{model="a"\} 2\n/);
        expect(metrics).toMatch(/los_model_load_duration_seconds_count\{model="b"\} 1\n/);
        expect(metrics).toMatch(/los_model_load_duration_seconds_bucket\{le="\+Inf",model="a"\} 2\n/);
        const buckets = [...metrics.matchAll(/los_model_load_duration_seconds_bucket\{le="([^"]+)",model="a"\} (\d+)/g)];
        expect(buckets.map((match) => match[1])).toEqual(["0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "30", "60", "120", "300", "+Inf"]);
        // Cumulative: each bucket holds at least the loads of the one before.
        const counts = buckets.map((match) => Number(match[2]));
        expect(counts).toEqual([...counts].sort((x, y) => x - y));
        expect(metrics).toMatch(/los_model_loads_total\{model="a",result="ok"\} 2\n/);
    });

    it("does not take a model from the requests using it: 409 while one streams, unloaded once it ended", async () => {
        const fakes = library();
        const release = gate();
        fakes.pieceGates.set("a", release.opened);
        const target = await start(fakes, [model("a")]);
        const streaming = await post(target, "/v1/chat/completions", {model: "a", stream: true, messages: [{role: "user", content: "hi"}]});
        expect(streaming.status).toBe(200);
        const refused = await post(target, "/models/unload", {model: "a"});
        expect(refused.status).toBe(409);
        expect((await jsonOf(refused)).error).toMatchObject({
            code: "model_in_use", param: "model",
            message: "Model 'a' is in use by 1 request (running or waiting): it is not unloaded. Unload it once it is idle."
        });
        expect(fakes.disposed).toEqual([]);
        release.open();
        expect((await readSse(streaming)).raw).toContain("there");
        expect((await post(target, "/models/unload", {model: "a"})).status).toBe(200);
        expect(fakes.disposed).toEqual(["a"]);
    });

    it("answers 409 for a model that is loading; the load goes on for its requests", async () => {
        const fakes = library();
        const loadGate = gate();
        fakes.loadGates.set("a", loadGate.opened);
        const target = await start(fakes, [model("a")]);
        const request = post(target, "/v1/chat/completions", {model: "a", messages: [{role: "user", content: "hi"}]});
        await fakes.loadStarted("a");
        const refused = await post(target, "/models/unload", {model: "a"});
        expect(refused.status).toBe(409);
        expect((await jsonOf(refused)).error.message).toBe("Model 'a' is loading: it is not unloaded. Unload it once it is idle.");
        loadGate.open();
        expect((await request).status).toBe(200);
    });
});

// The VRAM side of the budget (docs/models.md "The model library"): estimates that put bytes on a GPU (made up here, as
// the fake engines take nothing; this machine has no GPU and the test asks no GPU runtime), a VRAM budget of 1 GB.
describe("the VRAM budget, through the management API", () => {
    const estimates = {
        "cpu": {ram: 100 * mb, vram: 0},
        "gpu-a": {ram: 100 * mb, vram: 600 * mb},
        "gpu-b": {ram: 100 * mb, vram: 500 * mb},
        "huge": {ram: 50 * mb, vram: 2048 * mb}
    };
    const startGpu = async (fakes: ReturnType<typeof library>, clock: ManualClock) => server = await startLibraryServer(fakes, {
        models: Object.keys(estimates).map((id) => model(id)), estimates, clock, config: {vramBudget: 1024 * mb, memoryWaitSeconds: 0}
    });

    it("a load short of VRAM evicts the least recently used model holding VRAM, not an older CPU one; /models and /metrics per device", async () => {
        const fakes = library();
        const clock = new ManualClock();
        const target = await startGpu(fakes, clock);
        for (const id of ["cpu", "gpu-a"]) {
            expect((await post(target, "/models/load", {model: id})).status).toBe(200);
            clock.advance(1000);
        }
        expect((await jsonOf(await fetch(`${target.url}/models`))).memory)
            .toEqual({budget_bytes: 1024 * mb, in_use_bytes: 200 * mb, vram_budget_bytes: 1024 * mb, vram_in_use_bytes: 600 * mb});
        expect(await statusOf(target, "gpu-a")).toMatchObject({value: "loaded", estimated_bytes: 100 * mb, estimated_vram_bytes: 600 * mb});
        expect(await statusOf(target, "cpu")).toMatchObject({value: "loaded", estimated_bytes: 100 * mb, estimated_vram_bytes: 0});
        // 600 + 500 MB of VRAM do not fit 1 GB; RAM has room. `cpu` is the least recently used but holds no VRAM: it stays.
        expect((await post(target, "/models/load", {model: "gpu-b"})).status).toBe(200);
        expect(fakes.disposed).toEqual(["gpu-a"]);
        expect((await jsonOf(await fetch(`${target.url}/models`))).memory)
            .toEqual({budget_bytes: 1024 * mb, in_use_bytes: 200 * mb, vram_budget_bytes: 1024 * mb, vram_in_use_bytes: 500 * mb});
        const metrics = await (await fetch(`${target.url}/metrics`)).text();
        expect(metrics).toMatch(new RegExp(`^los_vram_budget_bytes ${1024 * mb}$`, "m"));
        expect(metrics).toMatch(new RegExp(`^los_vram_in_use_bytes ${500 * mb}$`, "m"));
        expect(metrics).toMatch(new RegExp(`^los_model_vram_bytes\\{model="gpu-b"\\} ${500 * mb}$`, "m"));
        expect(metrics).not.toMatch(/^los_model_vram_bytes\{model="cpu"\}/m);
        expect(metrics).toMatch(new RegExp(`^los_memory_in_use_bytes ${200 * mb}$`, "m"));
        expect(metrics).toMatch(/^los_model_evictions_total\{model="gpu-a",reason="memory"\} 1$/m);
    });

    it("a model larger than the whole VRAM budget is refused at once, naming VRAM, what it needs and what there is", async () => {
        const fakes = library();
        const target = await startGpu(fakes, new ManualClock());
        await post(target, "/models/load", {model: "gpu-a"});
        const refused = await post(target, "/models/load", {model: "huge"});
        expect(refused.status).toBe(503);
        expect(refused.headers.get("retry-after")).toBeNull();
        expect((await jsonOf(refused)).error).toMatchObject({
            code: "model_too_large",
            message: "Model 'huge' needs about 2.00 GB of GPU memory (VRAM), more than the server's whole VRAM budget of 1.00 GB (--vram-budget). " +
                "Its estimate counts its context: tokens per sequence (the manifest's `contextSize`, else --context-size, else the model's training context, " +
                "or the largest that fits the budget, at least 4,096) times its sequences (--parallel)."
        });
        // Nothing was evicted for it, nothing loaded.
        expect([fakes.created, fakes.disposed]).toEqual([["gpu-a"], []]);
    });

    it("VRAM held by a busy model is not taken: the load gets 503 naming VRAM and the holder", async () => {
        const fakes = library();
        const release = gate();
        fakes.pieceGates.set("gpu-a", release.opened);
        const target = await startGpu(fakes, new ManualClock());
        const streamed = await target.post("/v1/chat/completions", {model: "gpu-a", stream: true, messages: [{role: "user", content: "hi"}]});
        expect(streamed.status).toBe(200);
        const refused = await post(target, "/models/load", {model: "gpu-b"});
        expect(refused.status).toBe(503);
        expect(refused.headers.get("retry-after")).toBe("5");
        expect((await jsonOf(refused)).error).toMatchObject({
            code: "model_memory_busy",
            message: "Model 'gpu-b' needs about 500 MB of GPU memory (VRAM); 424 MB of the 1.00 GB VRAM budget is free, " +
                "and the rest is held by 'gpu-a' (600 MB, busy: 1 request running or waiting). Retry later."
        });
        release.open();
        await readSse(streamed);
        // Once it is idle, the same load evicts it.
        expect((await post(target, "/models/load", {model: "gpu-b"})).status).toBe(200);
        expect(fakes.disposed).toEqual(["gpu-a"]);
    });
});
