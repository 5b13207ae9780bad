import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCapabilities } from "../../src/capabilities/capabilities.js";
import type { Capability } from "../../src/capabilities/Capability.js";
import type { Engine } from "../../src/core/engines/Engine.js";
import { QueueFullError } from "../../src/core/engines/QueueFullError.js";
import type { RequestState } from "../../src/core/http/RequestState.js";
import { SseWriter } from "../../src/core/streaming/SseWriter.js";
import { StreamStart } from "../../src/core/streaming/StreamStart.js";
import { streamResponse } from "../../src/core/streaming/streamResponse.js";
import { eventually } from "../support/eventually.js";
import { jsonOf, readSse, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath } from "../support/testModels.js";

const capabilities = await loadCapabilities();

// The start phase of streamed responses (streamResponse + StreamStart), through a test-only capability whose "engine" is
// scripted per request: nothing is sent before the first result, so a failure until then is a plain JSON status; after
// it, errors travel in the stream; a client gone before the first result stops the work and is a 499.
type Script = "refuse" | "fail-before-first" | "fail-after-first" | "ok" | "hold";
const aborted: string[] = [];

class ScriptedEngine implements Engine {
    load() {
        return {parallel: 1, busy: 0, waiting: 0};
    }

    async run(script: Script, signal: AbortSignal, onResult: (value: string) => void): Promise<string> {
        await new Promise((resolve) => setImmediate(resolve));
        if (script === "refuse")
            throw new QueueFullError("scripted", 4);
        if (script === "fail-before-first")
            throw new Error("the engine broke before its first result");
        onResult("first");
        if (script === "hold") {
            await new Promise((_resolve, reject) => signal.addEventListener("abort", () => {
                aborted.push(script);
                reject(signal.reason);
            }, {once: true}));
        }
        await new Promise((resolve) => setImmediate(resolve));
        if (script === "fail-after-first")
            throw new Error("the engine broke after its first result");
        onResult("second");
        return "done";
    }

    async dispose() {}
}

const scriptedCapability: Capability<ScriptedEngine> = {
    task: "scripted",
    endpoints: ["/v1/scripted"],
    createEngine: async () => new ScriptedEngine(),
    routes(router, context) {
        router.post("/scripted", context.jsonBody, async (ctx) => {
            const state = ctx.state as RequestState;
            const {script, model, waitFor} = ctx.request.body as {script: Script, model: string, waitFor?: "first"};
            const {engine} = await context.engines.engineFor<ScriptedEngine>(model, "scripted");
            const writer = new SseWriter(ctx, {pingMs: 10_000});
            let start!: StreamStart;
            const run = engine.run(script, state.signal, (value) => {
                writer.send({value}, "result");
                start.reached();
            });
            start = new StreamStart(run);
            await streamResponse(ctx, writer, {started: waitFor === "first" ? start.started : Promise.resolve(), produce: async () => writer.send({value: await run}, "done")});
        });
    }
};

let server: TestServer;
beforeAll(async () => {
    server = await startTestServer({
        capabilities: [...capabilities, scriptedCapability as Capability],
        models: [{id: "scripted", task: "scripted", path: tinyChatModelPath}]
    });
});
afterAll(() => server.stop());

const post = (script: Script, waitFor?: "first") => server.post("/v1/scripted", {model: "scripted", script, waitFor});

describe("the start phase of a streamed response", () => {
    it("a refusal before the first result is a plain JSON error with its status (503 and Retry-After for a full queue)", async () => {
        const response = await post("refuse", "first");
        expect(response.status).toBe(503);
        expect(response.headers.get("content-type")).toContain("application/json");
        expect(response.headers.get("retry-after")).not.toBeNull();
        expect((await jsonOf(response)).error.message).toContain("busy");
    });

    it("a failure before the first result is a 500 JSON error, not a 200 stream with an error event", async () => {
        const response = await post("fail-before-first", "first");
        expect(response.status).toBe(500);
        expect(response.headers.get("content-type")).toContain("application/json");
    });

    it("the same failure with the start phase over at once (a token stream) travels in the stream", async () => {
        const response = await post("fail-before-first");
        expect(response.status).toBe(200);
        const {events} = await readSse(response);
        expect(events.map((event) => event.event)).toEqual(["error"]);
    });

    it("after the first result, the headers are out: results, then a failure as an error event", async () => {
        const ok = await post("ok", "first");
        expect(ok.status).toBe(200);
        expect((await readSse(ok)).events.map((event) => `${event.event}:${JSON.parse(event.data).value}`)).toEqual(["result:first", "result:second", "done:done"]);
        const failed = await post("fail-after-first", "first");
        expect(failed.status).toBe(200);
        const {events} = await readSse(failed);
        expect(events.map((event) => event.event)).toEqual(["result", "error"]);
        expect(JSON.parse(events[1].data).error.type).toBe("server_error");
    });

    it("a client gone mid-stream stops the work (its signal aborts)", async () => {
        const controller = new AbortController();
        const response = await server.post("/v1/scripted", {model: "scripted", script: "hold", waitFor: "first"}, {signal: controller.signal});
        expect(response.status).toBe(200);
        const reader = response.body!.getReader();
        await reader.read();
        controller.abort();
        expect(await eventually(() => aborted.includes("hold"))).toBe(true);
    });
});
