import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type OpenAI from "openai";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath } from "../support/testModels.js";

type Message = OpenAI.ChatCompletionMessageParam;

const servers: TestServer[] = [];
afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.stop()));
});

function filesUnder(folder: string): string[] {
    if (!fs.existsSync(folder))
        return [];
    return fs.readdirSync(folder, {recursive: true, withFileTypes: true}).filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
}

/** A conversation with a long system prompt of its own (hundreds of tokens), so pushing it out discards that much. */
function conversation(topic: string, words: number): Message[] {
    const vocabulary = ["cat", "dog", "sun", "tree", "house", "river", "bird", "moon", "road", "stone", "cloud", "field"];
    const text = Array.from({length: words}, (_, index) => vocabulary[(index * 7 + topic.length) % vocabulary.length]).join(" ");
    return [{role: "system", content: `You talk about ${topic}. ${text}`}, {role: "user", content: `Tell me about ${topic}.`}];
}

/** The prompt-state files under the server's cache folder. */
const stateFiles = (server: TestServer) => filesUnder(path.join(server.dir, "cache")).filter((file) => file.endsWith(".state"));

/** A server with one chat model of one sequence (so each conversation pushes the other out); `config` on top. */
async function start(config: Record<string, unknown> = {}): Promise<TestServer> {
    const server = await startTestServer({
        models: [{id: "a", task: "chat", path: tinyChatModelPath, contextSize: 1024, parallel: 1}],
        config: {preloadAll: true, keepAliveSeconds: null, ...config}
    });
    servers.push(server);
    return server;
}

/** A greedy answer of `maxTokens` on the server's model. */
const ask = (server: TestServer, messages: Message[], maxTokens = 4) =>
    server.client.chat.completions.create({model: "a", messages, max_tokens: maxTokens, temperature: 0});

describe("a conversation pushed out of the model's only sequence by another comes back with its prompt cache", () => {
    it("is written aside when the other takes the sequence, and loaded back for its next request: cached_tokens as if it had stayed, the same answer", async () => {
        const server = await start();
        const first = conversation("cats", 300), second = conversation("rivers and roads", 300);

        const a1 = await ask(server, first, 8);
        const promptTokens = a1.usage!.prompt_tokens;
        expect(promptTokens).toBeGreaterThan(300);
        // The other conversation takes the only sequence: the first is written aside, in the run's cache folder.
        const b1 = await ask(server, second, 8);
        expect(b1.usage!.prompt_tokens_details!.cached_tokens).toBeLessThan(50);
        const aside = stateFiles(server);
        expect(aside).toHaveLength(1);
        // The first again: loaded back, its whole prompt but the last token reused, and the same greedy answer.
        const a2 = await ask(server, first, 8);
        expect(a2.usage!.prompt_tokens_details!.cached_tokens).toBe(promptTokens - 1);
        expect(a2.choices[0].message.content).toBe(a1.choices[0].message.content);
        // The second was written aside in turn; the first's file went when it was loaded.
        const now = stateFiles(server);
        expect(now).toHaveLength(1);
        expect(now[0]).not.toBe(aside[0]);
        const b2 = await ask(server, second, 8);
        expect(b2.usage!.prompt_tokens_details!.cached_tokens).toBe(b1.usage!.prompt_tokens - 1);
        expect(b2.choices[0].message.content).toBe(b1.choices[0].message.content);
    }, 60_000);

    it("a state file gone or cut short costs that conversation its cache, never the request or the sequence (nor the process)", async () => {
        const server = await start();
        const cats = conversation("cats", 300), rivers = conversation("rivers", 300), dogs = conversation("dogs", 300);
        const cold = await ask(server, cats);
        await ask(server, rivers);
        const [catsFile] = stateFiles(server);
        fs.rmSync(catsFile);
        const again = await ask(server, cats);
        expect(again.usage!.prompt_tokens_details!.cached_tokens).toBeLessThan(50);
        expect(again.choices[0].message.content).toBe(cold.choices[0].message.content);
        // The rivers conversation was written aside in turn; cut it in half.
        const [riversFile] = stateFiles(server);
        fs.truncateSync(riversFile, Math.floor(fs.statSync(riversFile).size / 2));
        expect((await ask(server, rivers)).usage!.prompt_tokens_details!.cached_tokens).toBeLessThan(50);
        // The sequence serves on: other conversations, and one loaded back whole.
        await ask(server, dogs);
        const back = await ask(server, rivers);
        expect(back.usage!.prompt_tokens_details!.cached_tokens).toBe(back.usage!.prompt_tokens - 1);
        expect((await server.client.chat.completions.create({model: "a", messages: [{role: "user", content: "short"}], max_tokens: 2})).choices).toHaveLength(1);
    }, 60_000);

    it("keeps nothing aside with --prompt-cache-disk 0, and nothing is left once the model unloads", async () => {
        const off = await start({promptCacheDisk: 0});
        await ask(off, conversation("cats", 300));
        await ask(off, conversation("rivers", 300));
        const again = await ask(off, conversation("cats", 300));
        expect(again.usage!.prompt_tokens_details!.cached_tokens).toBeLessThan(50);
        expect(stateFiles(off)).toEqual([]);

        const on = await start();
        await ask(on, conversation("cats", 300));
        await ask(on, conversation("rivers", 300));
        expect(filesUnder(path.join(on.dir, "cache")).some((file) => file.includes("-displaced"))).toBe(true);
        // Unloaded (the management API): the displaced states go; the free sequence's state is saved as on any unload.
        const response = await on.post("/models/unload", {model: "a"});
        expect(response.status).toBe(200);
        expect(filesUnder(path.join(on.dir, "cache")).some((file) => file.includes("-displaced"))).toBe(false);
    }, 60_000);
});
