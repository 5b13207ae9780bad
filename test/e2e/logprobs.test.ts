import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { realTemplateModels } from "../support/realTemplateModels.js";
import { readSse, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath } from "../support/testModels.js";

type Entry = {token: string, logprob: number, bytes: number[], top_logprobs: {token: string, logprob: number, bytes: number[]}[]};

const textOf = (entries: readonly {bytes: number[]}[]) => new TextDecoder().decode(Uint8Array.from(entries.flatMap((entry) => entry.bytes)));

/** Same tokens and bytes, logprobs equal to 4 decimals (top alternatives compared as a set). */
function expectSameEntries(actual: Entry[], expected: Entry[]) {
    expect(actual.map((entry) => entry.token)).toEqual(expected.map((entry) => entry.token));
    actual.forEach((entry, index) => {
        expect(entry.bytes).toEqual(expected[index].bytes);
        expect(entry.logprob).toBeCloseTo(expected[index].logprob, 4);
        const tops = new Map(expected[index].top_logprobs.map((top) => [top.token, top.logprob]));
        for (const top of entry.top_logprobs)
            if (tops.has(top.token))
                expect(top.logprob).toBeCloseTo(tops.get(top.token)!, 4);
        expect(entry.top_logprobs.length).toBe(expected[index].top_logprobs.length);
    });
}

describe("logprobs / top_logprobs on /v1/chat/completions", () => {
    let server: TestServer;
    beforeAll(async () => {
        server = await startTestServer({
            models: [{id: "tiny-chat", task: "chat", path: tinyChatModelPath, contextSize: 256, parallel: 2}]
        });
    });
    afterAll(() => server.stop());

    const base = {model: "tiny-chat", messages: [{role: "user" as const, content: "Once upon a time"}], max_tokens: 16, seed: 21};

    it("non-streamed: one entry per token in OpenAI's shape, text and sampling unchanged", async () => {
        const plain = await server.client.chat.completions.create(base);
        const completion = await server.client.chat.completions.create({...base, logprobs: true, top_logprobs: 3});
        const [choice] = completion.choices;
        expect(choice.message.content).toBe(plain.choices[0].message.content);
        // The counts are the same; only how many prompt tokens came from the prompt cache may differ.
        const {prompt_tokens_details: _plainCache, ...plainCounts} = plain.usage!;
        const {prompt_tokens_details: _cache, ...counts} = completion.usage!;
        expect(counts).toEqual(plainCounts);
        expect(choice.logprobs!.refusal).toBeNull();
        const content = choice.logprobs!.content as Entry[];
        expect(content).toHaveLength(16);
        expect(textOf(content)).toBe(choice.message.content);
        for (const entry of content) {
            expect(Object.keys(entry).sort()).toEqual(["bytes", "logprob", "token", "top_logprobs"]);
            expect(entry.logprob).toBeLessThanOrEqual(0);
            expect(entry.token).toBe(new TextDecoder().decode(Uint8Array.from(entry.bytes)));
            expect(entry.top_logprobs).toHaveLength(3);
            const tops = entry.top_logprobs.map((top) => top.logprob);
            expect(tops).toEqual([...tops].sort((a, b) => b - a));
            expect(entry.logprob).toBeLessThanOrEqual(tops[0]);
            for (const top of entry.top_logprobs)
                expect(Object.keys(top).sort()).toEqual(["bytes", "logprob", "token"]);
            // The top alternatives of a real distribution: at most probability 1 together.
            expect(tops.reduce((sum, logprob) => sum + Math.exp(logprob), 0)).toBeLessThanOrEqual(1 + 1e-6);
        }
        expect(plain.choices[0].logprobs).toBeNull();
    });

    it("logprobs without top_logprobs gives empty top_logprobs lists", async () => {
        const completion = await server.client.chat.completions.create({...base, max_tokens: 4, logprobs: true});
        expect(completion.choices[0].logprobs!.content!.every((entry) => entry.top_logprobs.length === 0)).toBe(true);
    });

    it("temperature 0: every chosen token is the top-1, and logprobs do not depend on sampling settings", async () => {
        const greedy = await server.client.chat.completions.create({...base, temperature: 0, logprobs: true, top_logprobs: 1});
        for (const entry of greedy.choices[0].logprobs!.content!) {
            expect(entry.token).toBe(entry.top_logprobs[0].token);
            expect(entry.logprob).toBe(entry.top_logprobs[0].logprob);
        }
        // Same tokens forced by top_p ~0 at temperature 1.5: the same raw logprobs (before sampling transformations).
        const nucleus = await server.client.chat.completions.create({...base, temperature: 1.5, top_p: 0.000001, logprobs: true, top_logprobs: 1});
        expect(nucleus.choices[0].message.content).toBe(greedy.choices[0].message.content);
        expectSameEntries(nucleus.choices[0].logprobs!.content as Entry[], greedy.choices[0].logprobs!.content as Entry[]);
    });

    it("a stop sequence: entries for the tokens with text in the content, none for the stop text", async () => {
        const plain = await server.client.chat.completions.create({...base, max_tokens: 40});
        const text = plain.choices[0].message.content!;
        const stop = text.slice(10, 12);
        const completion = await server.client.chat.completions.create({...base, max_tokens: 40, stop, logprobs: true, top_logprobs: 2});
        const content = completion.choices[0].message.content!;
        expect(completion.choices[0].finish_reason).toBe("stop");
        const entries = completion.choices[0].logprobs!.content as Entry[];
        expect(textOf(entries).startsWith(content)).toBe(true);
        expect(textOf(entries.slice(0, -1)).length).toBeLessThan(content.length);
    });

    it("streamed (raw SSE): each chunk carries the entries of the tokens whose text it carries", async () => {
        const whole = await server.client.chat.completions.create({...base, n: 2, logprobs: true, top_logprobs: 2});
        const response = await server.post("/v1/chat/completions", {...base, n: 2, logprobs: true, top_logprobs: 2, stream: true});
        const {events} = await readSse(response);
        const chunks = events.slice(0, -1).map((event) => JSON.parse(event.data));
        const streamed: Entry[][] = [[], []];
        for (const chunk of chunks) {
            const [choice] = chunk.choices;
            if (choice.finish_reason != null || choice.delta.role != null) {
                expect(choice.logprobs).toBeNull();
                continue;
            }
            expect(choice.logprobs.refusal).toBeNull();
            expect(textOf(choice.logprobs.content)).toBe(choice.delta.content);
            streamed[choice.index].push(...choice.logprobs.content);
        }
        // The same tokens; the values may differ in the last float digits, since two sequences
        // decoded in one batch do not always share a batch the same way twice.
        whole.choices.forEach((choice, index) => expectSameEntries(streamed[index], choice.logprobs!.content as Entry[]));
    });

    it("streamed through the official client", async () => {
        const stream = await server.client.chat.completions.create({...base, logprobs: true, top_logprobs: 5, stream: true});
        let text = "";
        const entries: Entry[] = [];
        for await (const chunk of stream)
            for (const choice of chunk.choices) {
                text += choice.delta.content ?? "";
                entries.push(...(choice.logprobs?.content ?? []) as Entry[]);
            }
        expect(entries).toHaveLength(16);
        expect(entries.every((entry) => entry.top_logprobs.length === 5)).toBe(true);
        expect(textOf(entries)).toBe(text);
    });
});

describe("logprobs of a thinking model: the answer's tokens only", () => {
    // Models with real templates, scripted to think "I think" then answer "Hello world" (realTemplateModels).
    const thinkers = realTemplateModels.filter((spec) => ["qwen3", "r1-distill", "gpt-oss"].includes(spec.id));
    let server: TestServer;
    beforeAll(async () => {
        server = await startTestServer({models: thinkers.map((spec) => ({id: spec.id, task: "chat", path: spec.path, contextSize: 1024}))});
    });
    afterAll(() => server.stop());

    const request = (model: string) => ({model, messages: [{role: "user" as const, content: "Tell me about the cat."}], temperature: 0, logprobs: true, top_logprobs: 2});

    it.each(thinkers.map((spec) => spec.id))("%s, not streamed: the entries joined are the content, none for the reasoning or its tags", async (model) => {
        const completion = await server.client.chat.completions.create(request(model));
        const message = completion.choices[0].message as {content: string, reasoning_content?: string};
        expect(message.reasoning_content).toBe("I think");
        const entries = completion.choices[0].logprobs!.content as Entry[];
        expect(textOf(entries)).toBe(message.content);
        expect(entries.map((entry) => entry.token)).toEqual(["Hello", " world"]);
    });

    it.each(thinkers.map((spec) => spec.id))("%s, streamed: reasoning chunks carry no entries; the content chunks' entries are their text", async (model) => {
        const response = await server.post("/v1/chat/completions", {...request(model), stream: true});
        const chunks = (await readSse(response)).events.filter((event) => event.data !== "[DONE]").map((event) => JSON.parse(event.data));
        let content = "";
        const entries: Entry[] = [];
        for (const {choices: [choice]} of chunks) {
            if (choice.delta.reasoning_content != null)
                expect(choice.logprobs ?? null).toBeNull();
            if (choice.delta.content == null || choice.delta.content === "")
                continue;
            expect(textOf(choice.logprobs.content)).toBe(choice.delta.content);
            content += choice.delta.content;
            entries.push(...choice.logprobs.content);
        }
        expect(content).toBe("Hello world");
        expect(textOf(entries)).toBe(content);
    });

    it.each(["qwen3", "r1-distill"])("%s in JSON mode (a free thought, then the grammar): the entries joined are the JSON", async (model) => {
        const completion = await server.client.chat.completions.create({
            ...request(model), messages: [{role: "user", content: "Answer in json."}], max_tokens: 30, response_format: {type: "json_object"}
        });
        const message = completion.choices[0].message as {content: string, reasoning_content?: string};
        expect(message.reasoning_content).toContain("I think");
        expect(message.content.trimStart().startsWith("{")).toBe(true);
        expect(textOf(completion.choices[0].logprobs!.content as Entry[])).toBe(message.content);
    });
});
