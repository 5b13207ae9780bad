import { getLlama, LlamaCompletion } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonOf, readSse, startTestServer, type TestServer } from "../support/startTestServer.js";
import { storiesGreedyText, storiesModelPath } from "../support/testModels.js";

/** The token counts of a usage (the prompt cache's `prompt_tokens_details` varies with what ran before). */
const counts = ({prompt_tokens, completion_tokens, total_tokens}: {prompt_tokens: number, completion_tokens: number, total_tokens: number}) =>
    ({prompt_tokens, completion_tokens, total_tokens});

// /v1/completions on stories260K, a real base model without a chat template, served as a chat model.
const bos = 1;
const eos = 2;
const prompt = "Once upon a time";

type Logprobs = {tokens: string[], token_logprobs: (number | null)[], top_logprobs: (Record<string, number> | null)[], text_offset: number[]};

/**
 * Same tokens, offsets and alternatives; logprobs equal to 3 decimals (sequences decoded in other
 * batch compositions, or from a cached prompt prefix, differ in the last float digits).
 */
function expectSameLogprobs(actual: Logprobs, expected: Logprobs) {
    expect(actual.tokens).toEqual(expected.tokens);
    expect(actual.text_offset).toEqual(expected.text_offset);
    actual.token_logprobs.forEach((logprob, index) => logprob == null
        ? expect(expected.token_logprobs[index]).toBeNull()
        : expect(logprob).toBeCloseTo(expected.token_logprobs[index]!, 3));
    actual.top_logprobs.forEach((top, index) => {
        const other = expected.top_logprobs[index];
        if (top == null || other == null)
            return expect(top).toBe(other);
        expect(Object.keys(top).sort()).toEqual(Object.keys(other).sort());
        for (const key of Object.keys(top))
            expect(top[key]).toBeCloseTo(other[key], 3);
    });
}

/** Polls until `check` passes, a bounded number of times (the server frees a sequence after the socket closes). */
async function eventually(check: () => Promise<boolean>, tries = 100, delayMs = 20) {
    for (let attempt = 0; attempt < tries; attempt++) {
        if (await check())
            return true;
        await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
    return false;
}

describe("/v1/completions on stories260K (real weights, models/demo)", () => {
    let server: TestServer;
    beforeAll(async () => {
        server = await startTestServer({
            models: [{id: "stories-260k", task: "chat", path: storiesModelPath!, aliases: ["gpt-3.5-turbo-instruct"], contextSize: 256, parallel: 4, threads: 1}],
            // A short queue: a request with many prompts must not fill it by itself.
            config: {queueSize: 2}
        });
    });
    afterAll(() => server?.stop());

    const complete = async (fields: Record<string, unknown>) => {
        const response = await server.post("/v1/completions", {model: "stories-260k", prompt, temperature: 0, ...fields});
        const body = await jsonOf(response);
        if (response.status !== 200)
            throw new Error(`${response.status} ${JSON.stringify(body)}`);
        return body;
    };
    const errorOf = async (fields: Record<string, unknown>) => {
        const response = await server.post("/v1/completions", {model: "stories-260k", prompt, ...fields});
        return {status: response.status, error: (await jsonOf(response)).error};
    };
    const load = async () => (await jsonOf(await fetch(`${server.url}/health`))).models["stories-260k"];

    it("greedy completion of the bare BOS prompt (a token array) is the known text", async () => {
        const completion = await complete({prompt: [bos], max_tokens: 60});
        expect(completion.object).toBe("text_completion");
        expect(completion.id).toMatch(/^cmpl-/);
        expect(completion.choices).toHaveLength(1);
        expect(completion.choices[0].text.startsWith(storiesGreedyText)).toBe(true);
        expect(completion.usage).toMatchObject({prompt_tokens: 1, completion_tokens: 60, total_tokens: 61});
        // An empty text prompt is OpenAI's "beginning of a new document": BOS alone.
        const empty = await complete({prompt: "", max_tokens: 60});
        expect(empty.choices[0].text).toBe(completion.choices[0].text);
        expect(counts(empty.usage)).toEqual(counts(completion.usage));
    });

    it("greedy completion of a text prompt equals node-llama-cpp's own greedy completion", async () => {
        const llama = await getLlama({gpu: false});
        const model = await llama.loadModel({modelPath: storiesModelPath!});
        const context = await model.createContext({contextSize: 256, threads: 1});
        const expected = await new LlamaCompletion({contextSequence: context.getSequence()})
            .generateCompletion(prompt, {maxTokens: 16, temperature: 0});
        await context.dispose();
        await model.dispose();

        const completion = await complete({});
        expect(expected.length).toBeGreaterThan(10);
        expect(completion.choices[0].text).toBe(expected);
        expect(completion.choices[0].text).toBe(storiesGreedyText.slice(prompt.length, prompt.length + completion.choices[0].text.length));
    });

    it("max_tokens defaults to 16 (OpenAI's default): finish_reason length after 16 tokens", async () => {
        const completion = await complete({logprobs: 0});
        expect(completion.choices[0].finish_reason).toBe("length");
        expect(completion.usage.completion_tokens).toBe(16);
        expect(completion.choices[0].logprobs.tokens).toHaveLength(16);
        expect(completion.usage.prompt_tokens).toBe(5); // BOS + 4 tokens
    });

    it("the same seed gives the same text as chat's seeded sampling of the same tokens", async () => {
        // Without a template a chat prompt is BOS + the message text: the same tokens as this prompt.
        const fields = {temperature: 1, seed: 1234, max_tokens: 30, n: 2, logit_bias: {[eos]: -100}};
        const chat = await server.client.chat.completions.create({model: "stories-260k", messages: [{role: "user", content: prompt}], ...fields});
        const completion = await complete(fields);
        expect(completion.choices.map((choice: {text: string}) => choice.text)).toEqual(chat.choices.map((choice) => choice.message.content));
        expect(completion.choices.map((choice: {index: number}) => choice.index)).toEqual([0, 1]);
        expect(completion.choices[0].text).not.toBe(completion.choices[1].text);
    });

    it("echo puts the prompt before the completion", async () => {
        const plain = await complete({max_tokens: 8});
        const echoed = await complete({max_tokens: 8, echo: true});
        expect(echoed.choices[0].text).toBe(prompt + plain.choices[0].text);
        expect(counts(echoed.usage)).toEqual(counts(plain.usage));
    });

    it("an array of prompts: n choices per prompt, indexed prompt * n + choice", async () => {
        const completion = await complete({prompt: [prompt, "The dog"], n: 2, max_tokens: 6});
        expect(completion.choices.map((choice: {index: number}) => choice.index)).toEqual([0, 1, 2, 3]);
        const single = await complete({prompt: "The dog", max_tokens: 6});
        expect(completion.choices[2].text).toBe(single.choices[0].text);
        expect(completion.choices[3].text).toBe(single.choices[0].text); // greedy: both choices alike
        expect(completion.usage.prompt_tokens).toBe(5 + single.usage.prompt_tokens);
        expect(completion.usage.completion_tokens).toBe(24);
    });

    it("usage reports the prompt tokens taken from the prompt cache, as chat does", async () => {
        await complete({prompt: "The little dog ran to the park", max_tokens: 1});
        const again = await complete({prompt: "The little dog ran to the park", max_tokens: 1});
        expect(again.usage.prompt_tokens_details.cached_tokens).toBe(again.usage.prompt_tokens - 1);
        // Echoed logprobs need the whole prompt evaluated again: nothing counts as cached.
        const scored = await complete({prompt: "The little dog ran to the park", max_tokens: 0, echo: true, logprobs: 1});
        expect(scored.usage.prompt_tokens_details.cached_tokens).toBe(0);
    });

    it("more prompts than sequences and queue places together: they take turns, in order", async () => {
        const prompts = Array.from({length: 12}, (_, index) => index % 2 === 0 ? "The dog" : prompt);
        const completion = await complete({prompt: prompts, n: 2, max_tokens: 4});
        expect(completion.choices.map((choice: {index: number}) => choice.index)).toEqual(Array.from({length: 24}, (_, index) => index));
        const dog = (await complete({prompt: "The dog", max_tokens: 4})).choices[0].text;
        const story = (await complete({max_tokens: 4})).choices[0].text;
        completion.choices.forEach((choice: {index: number, text: string}) => expect(choice.text).toBe(Math.floor(choice.index / 2) % 2 === 0 ? dog : story));
        expect(await load()).toMatchObject({busy: 0, waiting: 0});
    });

    it("an array of token arrays is used as given (no BOS added)", async () => {
        const completion = await complete({prompt: [[bos], [bos, bos]], max_tokens: 4});
        expect(completion.usage.prompt_tokens).toBe(3);
        expect(completion.choices[0].text).toBe(storiesGreedyText.slice(0, completion.choices[0].text.length));
    });

    it("logprobs: OpenAI's shape, consistent with chat's logprobs for the same tokens", async () => {
        const completion = await complete({max_tokens: 12, logprobs: 3});
        const chat = await server.client.chat.completions.create({
            model: "stories-260k", messages: [{role: "user", content: prompt}], temperature: 0, max_tokens: 12, logprobs: true, top_logprobs: 3
        });
        const logprobs = completion.choices[0].logprobs as Logprobs;
        const content = chat.choices[0].logprobs!.content!;
        expect(logprobs.tokens).toEqual(content.map((entry) => entry.token));
        logprobs.token_logprobs.forEach((logprob, index) => expect(logprob).toBeCloseTo(content[index].logprob, 5));
        logprobs.top_logprobs.forEach((top, index) => {
            // The three most likely, plus the chosen token (greedy: one of them).
            expect(Object.keys(top!)).toEqual(content[index].top_logprobs.map((entry) => entry.token));
            expect(Object.keys(top!)[0]).toBe(logprobs.tokens[index]);
        });
        // text_offset: where each token's text starts in the text.
        const text = completion.choices[0].text as string;
        expect(logprobs.text_offset[0]).toBe(0);
        logprobs.tokens.forEach((token, index) => expect(text.slice(logprobs.text_offset[index]).startsWith(token)).toBe(true));
        expect(logprobs.tokens.join("")).toBe(text);
    });

    it("logprobs 0 still reports the chosen token in top_logprobs", async () => {
        const completion = await complete({max_tokens: 3, logprobs: 0, temperature: 1, seed: 3});
        const logprobs = completion.choices[0].logprobs as Logprobs;
        logprobs.top_logprobs.forEach((top, index) => expect(top).toEqual({[logprobs.tokens[index]]: logprobs.token_logprobs[index]}));
    });

    it("echo with logprobs and max_tokens 0 scores the prompt: its tokens' logprobs equal those of generating them", async () => {
        const generated = await complete({prompt: [bos], max_tokens: 10, logprobs: 2});
        const text = generated.choices[0].text as string;
        const scored = await complete({prompt: text, echo: true, max_tokens: 0, logprobs: 2});
        const [choice] = scored.choices;
        expect(choice.text).toBe(text);
        expect(choice.finish_reason).toBe("length");
        expect(scored.usage).toMatchObject({prompt_tokens: 11, completion_tokens: 0, total_tokens: 11});
        const expected = generated.choices[0].logprobs as Logprobs;
        const actual = choice.logprobs as Logprobs;
        expect(actual.tokens).toEqual(expected.tokens);
        // The first token follows the BOS the server put first: it has a real logprob.
        actual.token_logprobs.forEach((logprob, index) => expect(logprob).toBeCloseTo(expected.token_logprobs[index]!, 4));
        actual.top_logprobs.forEach((top, index) => expect(Object.keys(top!)).toEqual(Object.keys(expected.top_logprobs[index]!)));
        expect(actual.text_offset).toEqual(expected.text_offset);

        // As token ids nothing precedes the first token: its logprob is null, as OpenAI's first.
        const asTokens = await complete({prompt: [bos, bos], echo: true, max_tokens: 1, logprobs: 1});
        const tokenLogprobs = asTokens.choices[0].logprobs as Logprobs;
        expect(tokenLogprobs.token_logprobs[0]).toBeNull();
        expect(tokenLogprobs.top_logprobs[0]).toBeNull();
        expect(tokenLogprobs.token_logprobs).toHaveLength(3);
        expect(typeof tokenLogprobs.token_logprobs[1]).toBe("number");
    });

    it("echo with generated text: offsets of generated tokens continue after the prompt", async () => {
        const completion = await complete({echo: true, max_tokens: 5, logprobs: 1});
        const logprobs = completion.choices[0].logprobs as Logprobs;
        const text = completion.choices[0].text as string;
        expect(logprobs.tokens).toHaveLength(4 + 5);
        expect(logprobs.text_offset.slice(4)[0]).toBe(prompt.length);
        // The first token's leading space is SentencePiece's word start, not text (as detokenizing drops it).
        logprobs.tokens.forEach((token, index) =>
            expect(text.slice(logprobs.text_offset[index]).startsWith(index === 0 ? token.trimStart() : token)).toBe(true));
    });

    it("cuts at a stop sequence, which is not part of the text", async () => {
        const completion = await complete({max_tokens: 40, stop: ["Lily", "never appears"]});
        expect(completion.choices[0].text).toBe(", there was a little girl named ");
        expect(completion.choices[0].finish_reason).toBe("stop");
    });

    it("streamed equals non-streamed: text, logprobs, finish_reason and usage", async () => {
        const fields = {prompt: [prompt, "The cat"], n: 2, temperature: 0.9, seed: 77, max_tokens: 20, logprobs: 2, echo: true};
        const whole = await complete(fields);
        const response = await server.post("/v1/completions", {model: "stories-260k", ...fields, stream: true, stream_options: {include_usage: true}});
        expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
        const {events} = await readSse(response);
        expect(events.at(-1)!.data).toBe("[DONE]");
        const chunks = events.slice(0, -1).map((event) => JSON.parse(event.data));
        const texts = ["", "", "", ""];
        const streamed: Logprobs[] = texts.map(() => ({tokens: [], token_logprobs: [], top_logprobs: [], text_offset: []}));
        const finish: (string | null)[] = [null, null, null, null];
        for (const chunk of chunks.slice(0, -1)) {
            expect(chunk.object).toBe("text_completion");
            expect(chunk.usage).toBeNull();
            expect(chunk.choices).toHaveLength(1);
            const [choice] = chunk.choices;
            texts[choice.index] += choice.text;
            if (choice.finish_reason != null)
                finish[choice.index] = choice.finish_reason;
            if (choice.logprobs != null)
                for (const key of ["tokens", "token_logprobs", "top_logprobs", "text_offset"] as const)
                    (streamed[choice.index][key] as unknown[]).push(...choice.logprobs[key]);
        }
        const usage = chunks.at(-1);
        expect(usage.choices).toEqual([]);
        expect(counts(usage.usage)).toEqual(counts(whole.usage));
        whole.choices.forEach((choice: {index: number, text: string, finish_reason: string, logprobs: Logprobs}) => {
            expect(texts[choice.index]).toBe(choice.text);
            expect(finish[choice.index]).toBe(choice.finish_reason);
            expectSameLogprobs(streamed[choice.index], choice.logprobs);
        });
    });

    it("best_of: generates best_of candidates and returns the n with the highest mean logprob", async () => {
        const fields = {temperature: 1.5, seed: 99, max_tokens: 12, logit_bias: {[eos]: -100}};
        // The candidates are the choices of the same seed: choice k is sampled with the seed's k-th derived seed.
        const candidates = await complete({...fields, n: 3, logprobs: 0});
        const mean = (choice: {logprobs: Logprobs}) =>
            choice.logprobs.token_logprobs.reduce((sum: number, logprob) => sum + logprob!, 0) / choice.logprobs.token_logprobs.length;
        const ranked = [...candidates.choices].sort((a, b) => mean(b) - mean(a));
        expect(new Set(ranked.map((choice: {text: string}) => choice.text)).size).toBe(3);

        const best = await complete({...fields, best_of: 3});
        expect(best.choices).toHaveLength(1);
        expect(best.choices[0]).toMatchObject({index: 0, text: ranked[0].text, logprobs: null});
        expect(best.usage.completion_tokens).toBe(36); // every candidate was generated

        const bestTwo = await complete({...fields, best_of: 3, n: 2, logprobs: 1});
        expect(bestTwo.choices.map((choice: {text: string}) => choice.text)).toEqual([ranked[0].text, ranked[1].text]);
        expect(bestTwo.choices[0].logprobs.tokens).toHaveLength(12);
    });

    it("refuses what it cannot do with a 400 naming the field", async () => {
        expect(await errorOf({suffix: "The end."})).toMatchObject({status: 400, error: {param: "suffix", code: "unsupported_parameter"}});
        expect(await errorOf({prompt: [bos, 512]})).toMatchObject({status: 400, error: {param: "prompt[1]"}});
        expect(await errorOf({prompt: [[bos], [5000]]})).toMatchObject({status: 400, error: {param: "prompt[1][0]"}});
        expect(await errorOf({prompt: []})).toMatchObject({status: 400, error: {param: "prompt"}});
        expect(await errorOf({n: 3, best_of: 2})).toMatchObject({status: 400, error: {param: "best_of"}});
        expect(await errorOf({best_of: 2, stream: true})).toMatchObject({status: 400, error: {param: "best_of"}});
        expect(await errorOf({n: 5})).toMatchObject({status: 400, error: {param: "n"}}); // parallel is 4
        expect(await errorOf({best_of: 6})).toMatchObject({status: 400, error: {param: "best_of"}});
        expect(await errorOf({logprobs: 6})).toMatchObject({status: 400, error: {param: "logprobs"}});
        expect(await errorOf({prompt: "word ".repeat(300)})).toMatchObject({
            status: 400, error: {param: "prompt", code: "context_length_exceeded"}
        });
        expect(await errorOf({prompt: ["fine", "word ".repeat(300)], stream: true})).toMatchObject({
            status: 400, error: {param: "prompt[1]", code: "context_length_exceeded"}
        });
        expect(await load()).toMatchObject({busy: 0, waiting: 0});
    });

    it("a streaming client that disconnects frees its sequences", async () => {
        const controller = new AbortController();
        const response = await server.post("/v1/completions",
            {model: "stories-260k", prompt, n: 2, max_tokens: 200, stream: true, logit_bias: {[eos]: -100}}, {signal: controller.signal});
        await response.body!.getReader().read();
        controller.abort();
        expect(await eventually(async () => (await load()).busy === 0)).toBe(true);
    });

    it("the official client's completions.create works, streamed and not", async () => {
        const completion = await server.client.completions.create({model: "gpt-3.5-turbo-instruct", prompt, temperature: 0, max_tokens: 8});
        expect(completion.model).toBe("stories-260k");
        expect(completion.choices[0].text).toBe(storiesGreedyText.slice(prompt.length, prompt.length + completion.choices[0].text.length));
        const stream = await server.client.completions.create({model: "gpt-3.5-turbo-instruct", prompt, temperature: 0, max_tokens: 8, stream: true});
        let text = "";
        for await (const chunk of stream)
            text += chunk.choices[0]?.text ?? "";
        expect(text).toBe(completion.choices[0].text);
    });

    it("/v1/models lists /v1/completions for chat models", async () => {
        const models = await server.client.models.list();
        const entry = models.data.find((model) => model.id === "stories-260k") as unknown as {endpoints: string[]};
        expect(entry.endpoints).toEqual(["/v1/chat/completions", "/v1/completions", "/v1/responses", "/v1/messages", "/v1/tokenize", "/v1/detokenize", "/v1/decisions", "/v1/systemone"]);
    });
});
