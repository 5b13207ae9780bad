import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCapabilities, type CapabilityLine } from "../../src/capabilities/capabilities.js";
import type { Capability } from "../../src/capabilities/Capability.js";
import { capabilityList } from "../../src/capabilities/capabilityList.js";
import { manifestFromPaths } from "../../src/capabilities/manifestFromPaths.js";
import { hubTask } from "../../src/download/hubRepoEntry.js";
import { reverseManifestPart } from "../support/capabilities/reverse/reverseManifestPart.js";
import { jsonOf, readSse, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyBertPath, tinyChatModelPath } from "../support/testModels.js";

const root = path.resolve(import.meta.dirname, "../..");
const reverseFolder = path.join(root, "test/support/capabilities/reverse");

// A capability defined only in test/support/capabilities/reverse/: the one line capabilityList.ts would get, added to a copy of the list.
const list: readonly CapabilityLine[] = [
    ...capabilityList,
    {manifest: reverseManifestPart, server: async () => (await import("../support/capabilities/reverse/reverseCapability.js")).reverseCapability as Capability}
];
const capabilities = await loadCapabilities();
const withReverse = await loadCapabilities(list);

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
        expect((await jsonOf(wrongTask)).error.message).toContain("serves /v1/chat/completions, /v1/completions, /v1/responses, /v1/messages, /v1/tokenize, /v1/detokenize, /v1/decisions, /v1/systemone, not /v1/reverse");
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

describe("a capability recognises its own models, with nothing else in src/ edited", () => {
    let dir: string;
    let reverser: string;
    beforeAll(() => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "los-test-seam-"));
        reverser = path.join(dir, "my-reverser");
        fs.mkdirSync(reverser);
        fs.writeFileSync(path.join(reverser, "config.json"), JSON.stringify({model_type: "reverser"}));
    });
    afterAll(() => fs.rmSync(dir, {recursive: true, force: true}));

    it("`npm start -- <folder>` gives its model its task by its rule, and serves it on its route", async () => {
        expect(manifestFromPaths([reverser, tinyBertPath], withReverse).models.map(({id, task}) => [id, task]))
            .toEqual([["my-reverser", "reverse"], ["tiny-bert", "embeddings"]]);
        const server = await startTestServer({capabilities: withReverse, models: [], config: {modelPaths: [reverser]}});
        try {
            const response = await server.post("/v1/reverse", {model: "my-reverser", text: "abc"});
            expect(response.status).toBe(200);
            expect(await jsonOf(response)).toEqual({text: "cba"});
        } finally {
            await server.stop();
        }
    });

    it("without it in the list, the same folder is refused, naming what the other capabilities recognise", async () => {
        expect(() => manifestFromPaths([reverser])).toThrow(`${reverser} says config.json model_type reverser, which no capability serves (chat: architectures SmolVLMForConditionalGeneration, Idefics3ForConditionalGeneration; model_type smolvlm, idefics3; any other GGUF;`);
        expect(() => manifestFromPaths([reverser])).toThrow("transcription: model_type whisper;");
    });

    it("a hub repository tagged with its pipeline_tag is its model", () => {
        const facts = {gguf: false, topFiles: ["config.json", "onnx"], pipelineTag: "text-reversal"};
        expect(hubTask("someone/reverser", facts, list.map((line) => line.manifest))).toBe("reverse");
        expect(() => hubTask("someone/reverser", facts, capabilityList.map((line) => line.manifest)))
            .toThrow("someone/reverser says hub pipeline_tag text-reversal, which no capability serves");
    });

    it("a model it claims that another capability claims too is refused, naming both", async () => {
        const greedy: Capability = {...withReverse.at(-1)!, recognise: {modelTypes: ["bert"]}};
        expect(() => manifestFromPaths([tinyBertPath], [...capabilities, greedy])).toThrow(`${tinyBertPath} is claimed by more than one capability (config.json model_type bert): 'embeddings' and 'reverse'.`);
    });

    it("it needed its folder and one line: its files are these, and nothing in src/ names it", () => {
        expect(fs.readdirSync(reverseFolder).sort()).toEqual(["reverseCapability.ts", "reverseManifestPart.ts", "reverseTasks.ts"]);
        // It reaches src/ only through shared machinery, never into a capability's folder.
        const reached = fs.readdirSync(reverseFolder).flatMap((file) => [...fs.readFileSync(path.join(reverseFolder, file), "utf8")
            .matchAll(/from\s+"\.\.\/\.\.\/\.\.\/\.\.\/src\/([^"]+)"/g)].map((match) => match[1]));
        expect(reached.length).toBeGreaterThan(5);
        expect(reached.filter((target) => /^capabilities\/[^/]+\//.test(target))).toEqual([]);
        // Its task, endpoint and recognition rule are written in its folder only.
        const named = sourceFiles(path.join(root, "src")).filter((file) => /"reverse"|\/v1\/reverse|reverser|text-reversal/.test(fs.readFileSync(file, "utf8")));
        expect(named).toEqual([]);
    });
});

function sourceFiles(folder: string): string[] {
    return fs.readdirSync(folder, {withFileTypes: true}).flatMap((entry) =>
        entry.isDirectory() ? sourceFiles(path.join(folder, entry.name)) : entry.name.endsWith(".ts") ? [path.join(folder, entry.name)] : []);
}
