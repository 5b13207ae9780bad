import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../support/eventually.js";
import { jsonOf, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath } from "../support/testModels.js";


describe("concurrency, queueing and disconnects", () => {
    let server: TestServer;
    // The generated model never emits EOS by itself, so these requests run until aborted or the limit.
    const long = {model: "tiny", messages: [{role: "user", content: "hi"}], max_tokens: 4000};
    /** The load counts of the model on /health (its `details`, the chat engine's binary and prompt cache, left out). */
    const load = async () => {
        const {details: _details, ...counts} = (await jsonOf(await fetch(`${server.url}/health`))).models.tiny;
        return counts;
    };

    beforeAll(async () => {
        server = await startTestServer({
            models: [{id: "tiny", task: "chat", path: tinyChatModelPath, contextSize: 4096, parallel: 2}],
            config: {queueSize: 1}
        });
    });
    afterAll(() => server.stop());

    it("reports its load on /health", async () => {
        expect(await load()).toMatchObject({parallel: 2, busy: 0, waiting: 0});
    });

    it("a streaming client that disconnects frees its sequence at once", async () => {
        const controller = new AbortController();
        const response = await server.post("/v1/chat/completions", {...long, stream: true}, {signal: controller.signal});
        const reader = response.body!.getReader();
        await reader.read();
        expect((await load()).busy).toBe(1);
        controller.abort();
        expect(await eventually(async () => (await load()).busy === 0)).toBe(true);
    });

    it("a non-streaming client that disconnects frees its sequence", async () => {
        const controller = new AbortController();
        const pending = server.post("/v1/chat/completions", long, {signal: controller.signal}).catch((error) => error);
        expect(await eventually(async () => (await load()).busy === 1)).toBe(true);
        controller.abort();
        expect((await pending).name).toBe("AbortError");
        expect(await eventually(async () => (await load()).busy === 0)).toBe(true);
    });

    it("queues beyond the parallel sequences, and answers 503 with Retry-After beyond the queue", async () => {
        const controllers = [new AbortController(), new AbortController(), new AbortController()];
        const running = controllers.map((controller) =>
            server.post("/v1/chat/completions", {...long, stream: true}, {signal: controller.signal}));
        // two run, one waits (queue size 1)
        const responses = await Promise.all(running);
        expect(responses.map((response) => response.status)).toEqual([200, 200, 200]);
        expect(await eventually(async () => {
            const state = await load();
            return state.busy === 2 && state.waiting === 1;
        })).toBe(true);

        const overflow = await server.post("/v1/chat/completions", long);
        expect(overflow.status).toBe(503);
        expect(overflow.headers.get("retry-after")).toBe("2");
        const body = await jsonOf(overflow);
        expect(body.error.code).toBe("server_overloaded");
        expect(body.error.type).toBe("service_unavailable_error");

        // The official client sees the same as an InternalServerError subclass with status 503.
        const error = await server.client.chat.completions.create({...long, messages: [{role: "user", content: "hi"}]} as never).catch((caught) => caught);
        expect(error.status).toBe(503);

        // When a running request goes away, the waiting one gets its sequence.
        controllers[0].abort();
        expect(await eventually(async () => {
            const state = await load();
            return state.busy === 2 && state.waiting === 0;
        })).toBe(true);
        controllers[1].abort();
        controllers[2].abort();
        expect(await eventually(async () => (await load()).busy === 0)).toBe(true);
    });

    it("a waiting request that disconnects leaves the queue", async () => {
        const controllers = [new AbortController(), new AbortController(), new AbortController()];
        controllers.forEach((controller) => server.post("/v1/chat/completions", {...long, stream: true}, {signal: controller.signal}).catch(() => {}));
        expect(await eventually(async () => (await load()).waiting === 1)).toBe(true);
        controllers[2].abort();
        expect(await eventually(async () => (await load()).waiting === 0)).toBe(true);
        controllers[0].abort();
        controllers[1].abort();
        expect(await eventually(async () => (await load()).busy === 0)).toBe(true);
    });

    it("runs concurrent requests at the same time on separate sequences", async () => {
        // Both streams have produced tokens and neither is finished (4000 tokens each, by construction):
        // both sequences are busy at once, which would not be so if requests ran one after another.
        const controllers = [new AbortController(), new AbortController()];
        const readers = await Promise.all(controllers.map(async (controller) => {
            const response = await server.post("/v1/chat/completions", {...long, stream: true, seed: 1}, {signal: controller.signal});
            const reader = response.body!.getReader();
            const decoder = new TextDecoder();
            let text = "";
            while (!text.includes('"content"'))
                text += decoder.decode((await reader.read()).value, {stream: true});
            return text;
        }));
        expect(readers).toHaveLength(2);
        expect(await load()).toMatchObject({parallel: 2, busy: 2, waiting: 0});
        controllers.forEach((controller) => controller.abort());
        expect(await eventually(async () => (await load()).busy === 0)).toBe(true);

        // Same seed, same prompt, decoded concurrently in shared batches: same text.
        const finished = await Promise.all([1, 2].map(() => server.client.chat.completions.create({
            model: "tiny", messages: [{role: "user", content: "hi"}], max_tokens: 300, seed: 1
        })));
        expect(finished[0].choices[0].message.content).toBe(finished[1].choices[0].message.content);
        expect(await load()).toMatchObject({parallel: 2, busy: 0, waiting: 0});
    });
});
