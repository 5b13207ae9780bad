import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCapabilities } from "../../src/capabilities/capabilities.js";
import type { Capability } from "../../src/capabilities/Capability.js";
import { reverseCapability } from "../support/capabilities/reverseCapability.js";
import { jsonOf, readSse, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath } from "../support/testModels.js";

const capabilities = await loadCapabilities();

// A capability defined only in test/support: registering it is the whole change.
const withReverse: readonly Capability[] = [...capabilities, reverseCapability as Capability];

describe("a capability added by one line: its folder's route, manifest settings, engine, errors and worker task", () => {
    let server: TestServer;
    beforeAll(async () => {
        server = await startTestServer({
            capabilities: withReverse,
            models: [
                {id: "rev", task: "reverse", path: tinyChatModelPath, repeat: 2, maxLength: 20},
                {id: "tiny-chat", task: "chat", path: tinyChatModelPath, contextSize: 128, parallel: 1}
            ]
        });
    });
    afterAll(() => server.stop());

    it("serves its route with its manifest settings, running its task in the shared worker pool", async () => {
        const response = await server.post("/v1/reverse", {model: "rev", text: "abc"});
        expect(response.status).toBe(200);
        expect(await jsonOf(response)).toEqual({text: "cbacba"});
    });

    it("streams the task's progress as named events, in order, then the result", async () => {
        const {events} = await readSse(await server.post("/v1/reverse", {model: "rev", text: "hello", stream: true}));
        expect(events.map((event) => event.event)).toEqual([...Array(5).fill("reverse.progress"), "reverse.done"]);
        expect(events.slice(0, 5).map((event) => JSON.parse(event.data))).toEqual(
            ["h", "eh", "leh", "lleh", "olleh"].map((partial, index) => ({step: index + 1, steps: 5, partial})));
        expect(JSON.parse(events[5].data)).toEqual({text: "olleholleh"});
    });

    it("maps its engine's own error to a 400 naming the field, and validates its body", async () => {
        const tooLong = await server.post("/v1/reverse", {model: "rev", text: "x".repeat(21)});
        expect(tooLong.status).toBe(400);
        expect((await jsonOf(tooLong)).error).toMatchObject({param: "text", code: "text_too_long", type: "invalid_request_error"});
        const missing = await server.post("/v1/reverse", {model: "rev"});
        expect(missing.status).toBe(400);
        expect((await jsonOf(missing)).error.param).toBe("text");
    });

    it("is listed with its endpoint, reported in /health, and kept apart from the other tasks", async () => {
        const models = await jsonOf(await fetch(`${server.url}/v1/models`));
        expect(models.data.find((model: {id: string}) => model.id === "rev")).toMatchObject({task: "reverse", endpoints: ["/v1/reverse"]});
        expect((await jsonOf(await fetch(`${server.url}/health`))).models.rev).toEqual({parallel: 1, busy: 0, waiting: 0});
        const wrongTask = await server.post("/v1/reverse", {model: "tiny-chat", text: "abc"});
        expect(wrongTask.status).toBe(400);
        expect((await jsonOf(wrongTask)).error.message).toContain("serves /v1/chat/completions, /v1/completions, /v1/responses, /v1/messages, not /v1/reverse");
    });
});

describe("a capability's manifest fields are validated at startup like the built-in ones", () => {
    const start = (model: Record<string, unknown>, withCapability = true) => startTestServer({
        capabilities: withCapability ? withReverse : capabilities,
        models: [{id: "rev", task: "reverse", path: tinyChatModelPath, ...model}]
    });

    it("a bad value names the field", async () => {
        await expect(start({repeat: 9})).rejects.toThrow("'models[0].repeat'");
    });

    it("its own cross-field check names the field", async () => {
        await expect(start({repeat: 5, maxLength: 3})).rejects.toThrow("'models[0].repeat' cannot be more than 'maxLength'.");
    });

    it("its field on another task's model is refused", async () => {
        await expect(startTestServer({capabilities: withReverse, models: [{id: "c", task: "chat", path: tinyChatModelPath, repeat: 2}]}))
            .rejects.toThrow("'models[0].repeat' applies only to models with task \"reverse\"");
    });

    it("without the capability in the list, its task is unknown", async () => {
        await expect(start({}, false)).rejects.toThrow("models[0].task");
        expect(fs.existsSync(tinyChatModelPath)).toBe(true);
    });
});
