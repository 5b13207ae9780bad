import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type OpenAI from "openai";
import { LlamaChatEngine } from "../../src/capabilities/chat/llama/LlamaChatEngine.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import { makeTestLlamaGguf } from "../support/gguf/makeTestLlamaGguf.js";
import { jsonOf, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath } from "../support/testModels.js";

const mb = 1024 ** 2;
type Message = OpenAI.ChatCompletionMessageParam;

const servers: TestServer[] = [];
afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.stop()));
});

/** Two chat models (the same generated file under two ids), each estimated at 100 MB; `budget` decides whether both fit. */
async function start(budget: number, config: Record<string, unknown> = {}, logLines?: string[]) {
    const server = await startTestServer({
        logLines,
        models: [
            {id: "a", task: "chat", path: tinyChatModelPath, contextSize: 256, parallel: 2},
            {id: "b", task: "chat", path: tinyChatModelPath, contextSize: 256, parallel: 2}
        ],
        config: {preloadAll: false, memoryBudget: budget, keepAliveSeconds: null, ...config},
        estimateBytes: async () => 100 * mb
    });
    servers.push(server);
    return server;
}

const conversation = (topic: string) => {
    const first: Message[] = [{role: "system", content: `You talk about ${topic}.`}, {role: "user", content: `Tell me something about ${topic}, please.`}];
    return {first, followUp: [...first, {role: "assistant" as const, content: "Here is a thing."}, {role: "user" as const, content: "And one more?"}]};
};

/** A seeded, sampled request (temperature 1: the sampler sees every bit of the logits) with its logprobs. */
const ask = (server: TestServer, model: string, messages: Message[]) => server.client.chat.completions.create({
    model, messages, max_tokens: 8, seed: 11, temperature: 1, logprobs: true, top_logprobs: 3
});

/**
 * `older` and `newer` on `a`'s two sequences (at once: one after the other, the second would take the first's
 * sequence, which shares the template's opening), then `newer` again, which makes its sequence the most recently used.
 */
async function twoConversations(server: TestServer, older: Message[], newer: Message[]) {
    await Promise.all([ask(server, "a", older), ask(server, "a", newer)]);
    await ask(server, "a", newer);
}

const savedFiles = (server: TestServer) => filesUnder(path.join(server.dir, "cache"));

function filesUnder(folder: string): string[] {
    if (!fs.existsSync(folder))
        return [];
    return fs.readdirSync(folder, {recursive: true, withFileTypes: true}).filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
}

// Several model loads per test: minutes on a loaded 2-core machine.
describe("the prompt cache survives an unload (saved to disk, restored on reload)", {timeout: 180_000}, () => {
    it("the follow-up after an eviction reuses as many tokens as without the eviction, with byte-identical output", async () => {
        const {first, followUp} = conversation("boats");
        const warm = await start(1024 * mb);
        const swapped = await start(150 * mb);
        for (const server of [warm, swapped]) {
            await ask(server, "a", first);
            // Only one model fits in `swapped`: `b` evicts `a` there, and `a` evicts `b` below.
            await ask(server, "b", conversation("trains").first);
        }
        expect((await jsonOf(await fetch(`${swapped.url}/v1/models/a`))).status.value).toBe("unloaded");
        expect((await jsonOf(await fetch(`${warm.url}/v1/models/a`))).status.value).toBe("loaded");
        // While `a` is unloaded its sequence's state is on disk, the owner's only.
        const files = savedFiles(swapped).filter((file) => file.endsWith(".state"));
        expect(files).toHaveLength(1);
        expect(fs.statSync(files[0]).mode & 0o777).toBe(0o600);
        expect(fs.statSync(path.dirname(path.dirname(path.dirname(files[0])))).mode & 0o777).toBe(0o700);

        const warmFollowUp = await ask(warm, "a", followUp);
        const restoredFollowUp = await ask(swapped, "a", followUp);
        const cached = warmFollowUp.usage!.prompt_tokens_details!.cached_tokens!;
        expect(cached).toBeGreaterThan(0);
        expect(restoredFollowUp.usage!.prompt_tokens_details!.cached_tokens).toBe(cached);
        expect(restoredFollowUp.choices[0].message.content).toBe(warmFollowUp.choices[0].message.content);
        expect(restoredFollowUp.choices[0].logprobs).toEqual(warmFollowUp.choices[0].logprobs);
        // Restored once: the files are gone as the model is loaded again (`b`'s own state is saved in their place).
        expect(savedFiles(swapped).filter((file) => file.endsWith(".state")).every((file) => !files.includes(file))).toBe(true);
    });

    it("a draft model's sequences are saved and restored with the model's: the draft does not evaluate the conversation again", async () => {
        const {first, followUp} = conversation("boats");
        const llama = await loadLlamaRuntime({gpu: "off"});
        const folder = fs.mkdtempSync(path.join(os.tmpdir(), "los-draft-states-"));
        const closing = new AbortController();
        try {
            // `a` drafts with a one-layer copy of itself (the same vocabulary), its drafts sized by acceptance and the
            // draft's share of the weights alone (this model is too small for its own step's cost to allow one); `b`
            // plain. The states go to `folder`.
            const draftPath = path.join(folder, "draft.gguf");
            await makeTestLlamaGguf(draftPath, {seed: 1, nLayers: 1});
            const pair = await Promise.all([1024 * mb, 150 * mb].map(async (budget) => {
                const logLines: string[] = [];
                const server = await startTestServer({
                    logLines,
                    models: [{id: "a", task: "chat", path: tinyChatModelPath, contextSize: 256, parallel: 1}, {id: "b", task: "chat", path: tinyChatModelPath, contextSize: 256, parallel: 1}],
                    config: {preloadAll: false, memoryBudget: budget, keepAliveSeconds: null, logLevel: "info"},
                    estimateBytes: async () => 100 * mb,
                    factories: {chat: async (entry) => LlamaChatEngine.load(llama, {
                        id: entry.id, modelPath: entry.path, contextSize: 256, threads: 1, parallel: 1, queueSize: 8, promptCache: "on",
                        speculative: entry.id === "a" ? {mode: "draft", draftMax: 4, draftModelPath: draftPath, cost: {fixed: 0, perToken: 0}} : undefined,
                        promptStates: {folder: async () => path.join(folder, String(budget)), maxBytes: 1024 * mb, closing: closing.signal}
                    })}
                });
                servers.push(server);
                return {server, logLines};
            }));
            const [warm, swapped] = pair;
            for (const {server} of pair) {
                await ask(server, "a", first);
                await ask(server, "b", conversation("trains").first);
            }
            // `a` was evicted in `swapped`: its sequence's state and its draft sequence's, beside it.
            expect(filesUnder(path.join(folder, String(150 * mb))).filter((file) => !file.endsWith(".gguf")).map((file) => path.basename(file)).sort()).toEqual(["index.json", "sequence-0.draft.state", "sequence-0.state"]);
            const warmFollowUp = await ask(warm.server, "a", followUp);
            const restoredFollowUp = await ask(swapped.server, "a", followUp);
            expect(restoredFollowUp.usage!.prompt_tokens_details!.cached_tokens).toBe(warmFollowUp.usage!.prompt_tokens_details!.cached_tokens);
            expect(restoredFollowUp.choices[0].message.content).toBe(warmFollowUp.choices[0].message.content);
            // The reload's log line: the draft sequence came back holding the conversation.
            const reloaded = swapped.logLines.filter((line) => line.includes("restored_sequences"));
            expect(reloaded).toHaveLength(1);
            expect(Number(/restored_draft_tokens[=":]+(\d+)/.exec(reloaded[0])?.[1])).toBeGreaterThan(0);
        } finally {
            closing.abort();
            fs.rmSync(folder, {recursive: true, force: true});
        }
    });

    it("without a share of disk (--prompt-cache-disk 0) the follow-up after an eviction starts cold", async () => {
        const {first, followUp} = conversation("boats");
        const server = await start(150 * mb, {promptCacheDisk: 0});
        await ask(server, "a", first);
        await ask(server, "b", conversation("trains").first);
        expect(savedFiles(server)).toEqual([]);
        const after = await ask(server, "a", followUp);
        expect(after.usage!.prompt_tokens_details!.cached_tokens).toBe(0);
    });

    it("keeps the most recently used sequences within the model's share of bytes: the oldest is dropped", async () => {
        const older = conversation("boats"), newer = conversation("rivers");
        // First, how large one sequence's state is: both conversations saved, no bound to speak of.
        const measure = await start(150 * mb);
        await twoConversations(measure, older.first, newer.first);
        await ask(measure, "b", conversation("trains").first);
        const sizes = savedFiles(measure).filter((file) => file.endsWith(".state")).map((file) => fs.statSync(file).size);
        expect(sizes).toHaveLength(2);

        const bounded = await start(150 * mb, {promptCacheDisk: Math.max(...sizes) + 1024});
        await twoConversations(bounded, older.first, newer.first);
        await ask(bounded, "b", conversation("trains").first);
        expect(savedFiles(bounded).filter((file) => file.endsWith(".state"))).toHaveLength(1);
        const newerAfter = await ask(bounded, "a", newer.followUp);
        const olderAfter = await ask(bounded, "a", older.followUp);
        expect(newerAfter.usage!.prompt_tokens_details!.cached_tokens).toBeGreaterThan(0);
        // Only the system prompt's first tokens are shared with the newer conversation: far less than the whole first turn.
        expect(olderAfter.usage!.prompt_tokens_details!.cached_tokens).toBeLessThan(newerAfter.usage!.prompt_tokens_details!.cached_tokens!);
    });

    it("an idle unload (keep-alive 0) saves the cache too: the next turn finds its prompt", async () => {
        const {first, followUp} = conversation("boats");
        const server = await start(1024 * mb, {keepAliveSeconds: 0});
        const one = await ask(server, "a", first);
        while ((await jsonOf(await fetch(`${server.url}/v1/models/a`))).status.value !== "unloaded")
            await new Promise((resolve) => setTimeout(resolve, 20));
        const two = await ask(server, "a", followUp);
        expect(two.usage!.prompt_tokens_details!.cached_tokens).toBeGreaterThanOrEqual(one.usage!.prompt_tokens);
    });

    it("a state is restored only into the model it was saved from: a model file changed meanwhile starts cold, its files deleted", async () => {
        const {first, followUp} = conversation("boats");
        const modelDir = fs.mkdtempSync(path.join(os.tmpdir(), "los-model-"));
        try {
            const copy = path.join(modelDir, "a.gguf");
            fs.copyFileSync(tinyChatModelPath, copy);
            const server = await startTestServer({
                models: [
                    {id: "a", task: "chat", path: copy, contextSize: 256, parallel: 2},
                    {id: "b", task: "chat", path: tinyChatModelPath, contextSize: 256, parallel: 2}
                ],
                config: {preloadAll: false, memoryBudget: 150 * mb, keepAliveSeconds: null},
                estimateBytes: async () => 100 * mb
            });
            servers.push(server);
            await ask(server, "a", first);
            await ask(server, "b", conversation("trains").first);
            expect(savedFiles(server).filter((file) => file.endsWith(".state"))).toHaveLength(1);
            // Another file under the same name (here: the same bytes, a new modification time).
            fs.utimesSync(copy, new Date(), new Date(Date.now() + 60_000));
            const after = await ask(server, "a", followUp);
            expect(after.usage!.prompt_tokens_details!.cached_tokens).toBe(0);
            // `a` is loaded and `b`'s state saved in its place; `a`'s own files are gone.
            expect(savedFiles(server).filter((file) => file.endsWith(".state"))).toHaveLength(1);
        } finally {
            await Promise.all(servers.splice(0).map((server) => server.stop()));
            fs.rmSync(modelDir, {recursive: true, force: true});
        }
    });

    it("a cache folder that cannot be made costs the cache, not the model: it unloads (one warning) and loads again, cold", async () => {
        const {first, followUp} = conversation("boats");
        const logLines: string[] = [];
        const server = await start(150 * mb, {cacheDir: path.join(tinyChatModelPath, "cache"), logLevel: "warn"}, logLines);
        await ask(server, "a", first);
        await ask(server, "b", conversation("trains").first);
        expect(logLines.filter((line) => line.includes("could not be saved"))).toEqual([
            expect.stringContaining("The prompt cache of 'a' could not be saved: its next load starts cold")
        ]);
        const after = await ask(server, "a", followUp);
        expect(after.usage!.prompt_tokens_details!.cached_tokens).toBe(0);
        expect(after.choices[0].message.content).not.toBe("");
    });

    it("saves nothing at shutdown and leaves no file behind; a dead run's folder is removed at start, a live one's kept", async () => {
        const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), "los-cache-"));
        try {
            // A pid above Linux's pid_max: no such process.
            const dead = path.join(cacheDir, "run-99999999-abc");
            const live = path.join(cacheDir, `run-${process.pid}-abc`);
            for (const folder of [dead, live]) {
                fs.mkdirSync(path.join(folder, "prompt-states"), {recursive: true});
                fs.writeFileSync(path.join(folder, "prompt-states", "x.state"), "state");
            }
            const server = await start(150 * mb, {cacheDir});
            expect(fs.existsSync(dead)).toBe(false);
            expect(fs.existsSync(live)).toBe(true);
            await ask(server, "a", conversation("boats").first);
            await ask(server, "b", conversation("trains").first);
            expect(filesUnder(cacheDir).filter((file) => !file.startsWith(live))).toHaveLength(2);
            await servers.splice(0).map((running) => running.stop())[0];
            // `a`'s saved state went with the run folder; `b` was unloaded at shutdown without saving.
            expect(fs.readdirSync(cacheDir)).toEqual([path.basename(live)]);
        } finally {
            fs.rmSync(cacheDir, {recursive: true, force: true});
        }
    });
});
