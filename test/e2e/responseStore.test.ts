import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runKeysCli } from "../../src/auth/keysCli.js";
import { eventually } from "../support/eventually.js";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { storiesModelPath } from "../support/testModels.js";

// The Responses store through HTTP with the official `openai` client: each key has its own share (here
// `--response-store-mb 1`), so one key's flood never evicts another key's responses; a response larger than a share
// answers `store: false` (and is indeed not there); stored responses belong to the key's identity (its hash), so a new
// key given a revoked key's name reads none of them; reads return the JSON stored. Scripted engines whose output
// sizes are known: "small" answers "Hello world", "third" 300 KB (three fit a 1 MB share), "big" 1.5 MB (none fits).
let server: TestServer;
let alice: OpenAI;
let bob: OpenAI;
const clientFor = (apiKey: string) => new OpenAI({baseURL: `${server.url}/v1`, apiKey, maxRetries: 0});

beforeAll(async () => {
    const pieces: Record<string, string[]> = {small: ["Hello", " world"], third: ["y".repeat(300_000)], big: ["x".repeat(1_500_000)]};
    server = await startTestServer({
        models: Object.keys(pieces).map((id) => ({id, task: "chat", path: storiesModelPath})),
        config: {apiKeys: ["sk-alice", "sk-bob"], responseStoreMb: 1}, apiKey: "sk-alice",
        factories: {chat: async (entry) => new FakeChatEngine(entry.id, {pieces: pieces[entry.id]})}
    });
    alice = server.client;
    bob = clientFor("sk-bob");
});
afterAll(() => server.stop());

/** The response's `store` (OpenAI's answers carry it; the SDK's `Response` type leaves it out). */
const storeOf = (response: OpenAI.Responses.Response) => (response as unknown as {store: boolean}).store;
const notFound = (promise: Promise<unknown>) => promise.then(() => null, (error) => error instanceof OpenAI.NotFoundError ? error : null);

describe("the response store, per API key", () => {
    it("one key's flood evicts only its own oldest responses, never another key's", async () => {
        const kept = await alice.responses.create({model: "small", input: "remember me"});
        const floods: OpenAI.Responses.Response[] = [];
        for (let index = 0; index < 6; index++)
            floods.push(await bob.responses.create({model: "third", input: `flood ${index}`}));
        expect(floods.map(storeOf)).toEqual([true, true, true, true, true, true]);
        // Bob's 1 MB share holds his last three 300 KB responses; the first three gave way to them.
        for (const flood of floods.slice(0, 3))
            expect(await notFound(bob.responses.retrieve(flood.id))).not.toBeNull();
        for (const flood of floods.slice(3))
            expect((await bob.responses.retrieve(flood.id)).output_text).toBe("y".repeat(300_000));
        // Alice's response is untouched: readable, and continued.
        expect(await alice.responses.retrieve(kept.id)).toEqual(kept);
        const next = await alice.responses.create({model: "small", previous_response_id: kept.id, input: "and then?"});
        expect(next).toMatchObject({previous_response_id: kept.id, store: true});
    });

    it("a response larger than a key's share answers store: false, and is not there", async () => {
        const big = await alice.responses.create({model: "big", input: "x"});
        expect(big.output_text.length).toBe(1_500_000);
        expect(storeOf(big)).toBe(false);
        expect(await notFound(alice.responses.retrieve(big.id))).not.toBeNull();
        const continued = await notFound(alice.responses.create({model: "small", previous_response_id: big.id, input: "more"}));
        expect(continued?.param).toBe("previous_response_id");

        // Streamed: the final event says so too.
        const stream = await alice.responses.create({model: "big", input: "x", stream: true});
        let completed: OpenAI.Responses.Response | null = null;
        for await (const event of stream)
            if (event.type === "response.completed")
                completed = event.response;
        expect(storeOf(completed!)).toBe(false);
        expect(await notFound(alice.responses.retrieve(completed!.id))).not.toBeNull();
    });

    it("a conversation counts what it continues: the link that would pass the share is not stored, and says so", async () => {
        const chain = [await bob.responses.create({model: "third", input: "start"})];
        for (let index = 0; index < 3; index++)
            chain.push(await bob.responses.create({model: "third", input: `more ${index}`, previous_response_id: chain.at(-1)!.id}));
        // 300 KB, then 600, 900 and 1,200 KB with the conversation before each: the fourth passes the 1 MB share.
        expect(chain.map(storeOf)).toEqual([true, true, true, false]);
        expect(storeOf(await bob.responses.create({model: "small", input: "end", previous_response_id: chain[2].id}))).toBe(true);
        expect(await notFound(bob.responses.create({model: "small", input: "end", previous_response_id: chain[3].id}))).not.toBeNull();
    });

    it("reads return the JSON stored: the response as created, and input_items in either order with their length", async () => {
        const created = await alice.responses.create({model: "small", input: [
            {role: "user", content: "first"}, {role: "user", content: [{type: "input_text", text: "second"}]}
        ], metadata: {topic: "store"}});
        expect(await alice.responses.retrieve(created.id)).toEqual(created);
        const newestFirst = await alice.responses.inputItems.list(created.id);
        expect(newestFirst.data.map((item) => (item as {content: unknown}).content)).toEqual([[{type: "input_text", text: "second"}], "first"]);
        const raw = await fetch(`${server.url}/v1/responses/${created.id}/input_items?order=asc`, {headers: {Authorization: "Bearer sk-alice"}});
        expect(raw.headers.get("content-type")).toBe("application/json; charset=utf-8");
        const bytes = Buffer.from(await raw.arrayBuffer());
        expect(Number(raw.headers.get("content-length"))).toBe(bytes.length);
        const body = JSON.parse(bytes.toString("utf8"));
        expect(body).toEqual({object: "list", data: [...newestFirst.data].reverse(), first_id: newestFirst.data[1].id, last_id: newestFirst.data[0].id, has_more: false});
        // Bob sees none of it, on any route.
        expect(await notFound(bob.responses.retrieve(created.id))).not.toBeNull();
        expect(await notFound(bob.responses.inputItems.list(created.id))).not.toBeNull();
        expect(await notFound(bob.responses.delete(created.id))).not.toBeNull();
        await alice.responses.delete(created.id);
        expect(await notFound(alice.responses.retrieve(created.id))).not.toBeNull();
    });

    it("belongs to the key, not its name: revoke `dora`, add a new key named `dora`, and it reads nothing of the old one's", async () => {
        const keysFile = `${server.dir}/api-keys.json`;
        const output: string[] = [];
        const io = {stdout: (text: string) => output.push(text), stderr: (text: string) => output.push(text)};
        const addDora = async () => {
            output.length = 0;
            expect(await runKeysCli(["--file", keysFile, "add", "dora"], io)).toBe(0);
            const key = /sk-local-[A-Za-z0-9_-]{43}/.exec(output.join(""))![0];
            // The server looks at the keys file at most once a second: wait until it takes the key (a state that stays).
            expect(await eventually(async () => (await fetch(`${server.url}/v1/models`, {headers: {Authorization: `Bearer ${key}`}})).status === 200, 300)).toBe(true);
            return clientFor(key);
        };
        const oldDora = await addDora();
        const stored = await oldDora.responses.create({model: "small", input: "a secret"});
        expect((await oldDora.responses.retrieve(stored.id)).id).toBe(stored.id);

        expect(await runKeysCli(["--file", keysFile, "revoke", "dora"], io)).toBe(0);
        expect(await eventually(async () => (await oldDora.models.list().catch((error) => error)).status === 401, 300)).toBe(true);
        const newDora = await addDora();
        expect(await notFound(newDora.responses.retrieve(stored.id))).not.toBeNull();
        expect(await notFound(newDora.responses.inputItems.list(stored.id))).not.toBeNull();
        expect(await notFound(newDora.responses.delete(stored.id))).not.toBeNull();
        const continued = await notFound(newDora.responses.create({model: "small", previous_response_id: stored.id, input: "tell me"}));
        expect(continued?.param).toBe("previous_response_id");
    });
});
