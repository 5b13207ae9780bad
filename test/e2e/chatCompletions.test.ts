import type OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonOf, readSse, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath } from "../support/testModels.js";
import { testLlamaTokens } from "../support/gguf/makeTestLlamaGguf.js";

const eos = String(testLlamaTokens.eos.id);

describe("POST /v1/chat/completions on a generated ChatML model", () => {
    let server: TestServer;
    beforeAll(async () => {
        server = await startTestServer({
            models: [{id: "tiny-chat", task: "chat", path: tinyChatModelPath, family: "tiny", released: "2024-01-01", aliases: ["gpt-4o-mini"], contextSize: 256, parallel: 2}]
        });
    });
    afterAll(() => server.stop());

    it("answers through the official client with the concrete model id, usage and fingerprint", async () => {
        const completion = await server.client.chat.completions.create({
            model: "gpt-4o-mini",
            messages: [{role: "system", content: "Be brief."}, {role: "user", content: "Hello world"}],
            max_tokens: 12,
            seed: 7
        });
        expect(completion.object).toBe("chat.completion");
        expect(completion.id).toMatch(/^chatcmpl-/);
        expect(completion.model).toBe("tiny-chat");
        expect(completion.system_fingerprint).toMatch(/^fp_[0-9a-f]{12}$/);
        expect(Math.abs(completion.created - Date.now() / 1000)).toBeLessThan(5);
        expect(completion.choices).toHaveLength(1);
        const [choice] = completion.choices;
        expect(choice.message.role).toBe("assistant");
        expect(typeof choice.message.content).toBe("string");
        expect(choice.finish_reason).toBe("length");
        expect(choice.logprobs).toBeNull();
        expect(completion.usage?.completion_tokens).toBe(12);
        expect(completion.usage?.total_tokens).toBe(completion.usage!.prompt_tokens + 12);
    });

    it("counts prompt tokens of the rendered ChatML template exactly", async () => {
        // <s>? + "<|im_start|>user\nHello world<|im_end|>\n<|im_start|>assistant\n": measured against
        // a second message, the difference is exactly the tokens the second turn adds.
        const one = await server.client.chat.completions.create({model: "tiny-chat", messages: [{role: "user", content: "Hello world"}], max_tokens: 1});
        const two = await server.client.chat.completions.create({
            model: "tiny-chat",
            messages: [{role: "user", content: "Hello world"}, {role: "user", content: "Hello world"}],
            max_tokens: 1
        });
        // The second turn adds "<|im_start|>" "user" "\n" "Hello world"(2 tokens) "<|im_end|>" "\n": the same count the
        // first turn has, so the rendered prompt grows by the first prompt minus the generation prompt and BOS.
        expect(two.usage!.prompt_tokens).toBeGreaterThan(one.usage!.prompt_tokens);
        expect(one.usage!.prompt_tokens).toBeGreaterThan(5);
    });

    it("stops at an end-of-generation token forced by logit_bias, with finish_reason stop", async () => {
        const completion = await server.client.chat.completions.create({
            model: "tiny-chat", messages: [{role: "user", content: "hi"}], max_tokens: 50, logit_bias: {[eos]: 100}
        });
        expect(completion.choices[0].finish_reason).toBe("stop");
        expect(completion.choices[0].message.content).toBe("");
        expect(completion.usage!.completion_tokens).toBe(0);
    });

    it("is deterministic for a seed and varies without one", async () => {
        const ask = (seed?: number) => server.client.chat.completions.create({
            model: "tiny-chat", messages: [{role: "user", content: "Once upon a time"}], max_tokens: 24, temperature: 1, ...(seed == null ? {} : {seed})
        }).then((completion) => completion.choices[0].message.content);
        const [a, b, c] = [await ask(42), await ask(42), await ask(43)];
        expect(a).toBe(b);
        expect(c).not.toBe(a);
        const unseeded = await Promise.all([ask(), ask(), ask()]);
        expect(new Set(unseeded).size).toBeGreaterThan(1);
    });

    it("generates n=2 choices on separate sequences and counts both in usage", async () => {
        const completion = await server.client.chat.completions.create({
            model: "tiny-chat", messages: [{role: "user", content: "hi"}], n: 2, max_tokens: 10, seed: 3
        });
        expect(completion.choices.map((choice) => choice.index)).toEqual([0, 1]);
        expect(completion.choices[0].message.content).not.toBe(completion.choices[1].message.content);
        expect(completion.usage!.completion_tokens).toBe(20);
    });

    it("temperature 0 is greedy regardless of seed", async () => {
        const ask = (seed: number) => server.client.chat.completions.create({
            model: "tiny-chat", messages: [{role: "user", content: "hello"}], max_tokens: 16, temperature: 0, seed
        }).then((completion) => completion.choices[0].message.content);
        expect(await ask(1)).toBe(await ask(2));
    });

    it("top_p near 0 keeps only the most likely token, like greedy decoding", async () => {
        const ask = (extra: object) => server.client.chat.completions.create({
            model: "tiny-chat", messages: [{role: "user", content: "hello"}], max_tokens: 16, seed: 9, ...extra
        }).then((completion) => completion.choices[0].message.content);
        expect(await ask({top_p: 0.000001, temperature: 1.5})).toBe(await ask({temperature: 0}));
    });

    it("logit_bias -100 bans a token and 100 forces one", async () => {
        const greedy = await server.client.chat.completions.create({model: "tiny-chat", messages: [{role: "user", content: "hello"}], max_tokens: 8, temperature: 0});
        const forced = await server.client.chat.completions.create({
            model: "tiny-chat", messages: [{role: "user", content: "hello"}], max_tokens: 4, temperature: 1, seed: 1,
            logit_bias: {"500": 100}
        });
        const piece = forced.choices[0].message.content!;
        expect(forced.usage!.completion_tokens).toBe(4);
        // the same piece four times
        expect(piece.length % 4).toBe(0);
        expect(piece).toBe(piece.slice(0, piece.length / 4).repeat(4));
        expect(greedy.choices[0].message.content).not.toBe(piece.slice(0, greedy.choices[0].message.content!.length));
    });

    it("streams OpenAI's wire format: role chunk, content deltas, finish chunk, usage chunk, [DONE]", async () => {
        const response = await server.post("/v1/chat/completions", {
            model: "gpt-4o-mini", messages: [{role: "user", content: "hi"}], max_tokens: 6, seed: 5, stream: true,
            stream_options: {include_usage: true}
        });
        expect(response.status).toBe(200);
        expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
        const {events, raw} = await readSse(response);
        expect(raw.endsWith("data: [DONE]\n\n")).toBe(true);
        expect(events.at(-1)!.data).toBe("[DONE]");
        const chunks = events.slice(0, -1).map((event) => JSON.parse(event.data));
        const [first] = chunks;
        for (const chunk of chunks) {
            expect(chunk.id).toBe(first.id);
            expect(chunk.created).toBe(first.created);
            expect(chunk.model).toBe("tiny-chat");
            expect(chunk.system_fingerprint).toBe(first.system_fingerprint);
            expect(chunk.object).toBe("chat.completion.chunk");
        }
        expect(first.choices).toEqual([{index: 0, delta: {role: "assistant", content: null}, logprobs: null, finish_reason: null}]);
        const finish = chunks.at(-2);
        expect(finish.choices).toEqual([{index: 0, delta: {}, logprobs: null, finish_reason: "length"}]);
        const usage = chunks.at(-1);
        expect(usage.choices).toEqual([]);
        expect(usage.usage.completion_tokens).toBe(6);
        // Every other chunk carries usage: null when include_usage is on, as OpenAI does.
        expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);

        const streamed = chunks.slice(1, -2).map((chunk) => chunk.choices[0].delta.content).join("");
        const whole = await server.client.chat.completions.create({
            model: "tiny-chat", messages: [{role: "user", content: "hi"}], max_tokens: 6, seed: 5
        });
        expect(streamed).toBe(whole.choices[0].message.content);
    });

    it("the stream folded by the SDK (finalChatCompletion) is the completion answered without a stream, n=2 and logprobs included", async () => {
        const request = {model: "tiny-chat", messages: [{role: "user" as const, content: "hi"}], max_tokens: 8, n: 2, seed: 7, logprobs: true, top_logprobs: 2};
        const plain = await server.client.chat.completions.create(request);
        const folded = await server.client.chat.completions.stream({...request, stream_options: {include_usage: true}}).finalChatCompletion();
        // The SDK's fold adds `parsed` and `tool_calls: []` of its own; the id and time are each completion's, the second
        // request finds its prompt cached, and n > 1 choices share batches whose shapes vary (logprobs equal to 3 decimals).
        const same = ({id: _id, created: _created, choices, usage, ...rest}: OpenAI.ChatCompletion) => JSON.parse(JSON.stringify({
            ...rest, usage: {...usage, prompt_tokens_details: undefined},
            choices: choices.map(({message: {role, content, refusal}, ...choice}) => ({...choice, message: {role, content, refusal}}))
        }, (key, value) => key === "logprob" ? Number(value.toFixed(3)) : value));
        expect(same(folded)).toEqual(same(plain));
    });

    it("streams through the official client, n=2 interleaved, without usage unless asked", async () => {
        const stream = await server.client.chat.completions.create({
            model: "tiny-chat", messages: [{role: "user", content: "hi"}], max_tokens: 5, n: 2, seed: 11, stream: true
        });
        const texts = ["", ""];
        const finishes: (string | null)[] = [null, null];
        let sawUsage = false;
        for await (const chunk of stream) {
            if (chunk.usage != null) sawUsage = true;
            for (const choice of chunk.choices) {
                texts[choice.index] += choice.delta.content ?? "";
                if (choice.finish_reason != null) finishes[choice.index] = choice.finish_reason;
            }
        }
        expect(finishes).toEqual(["length", "length"]);
        expect(sawUsage).toBe(false);
        const whole = await server.client.chat.completions.create({
            model: "tiny-chat", messages: [{role: "user", content: "hi"}], max_tokens: 5, n: 2, seed: 11
        });
        expect(texts).toEqual(whole.choices.map((choice) => choice.message.content));
    });

    it("accepts text content parts, developer messages, assistant turns, unknown fields and user", async () => {
        const completion = await server.client.chat.completions.create({
            model: "tiny-chat",
            messages: [
                {role: "developer", content: "Be brief."},
                {role: "user", content: [{type: "text", text: "Hello"}, {type: "text", text: " world"}]},
                {role: "assistant", content: "Hi"},
                {role: "user", content: "again"}
            ],
            max_completion_tokens: 3,
            user: "tester-1",
            // a field from a newer API version
            ...({some_future_field: {a: 1}} as object)
        });
        expect(completion.usage!.completion_tokens).toBe(3);
    });

    it("rejects a prompt longer than the context with context_length_exceeded and the token counts", async () => {
        const response = await server.post("/v1/chat/completions", {
            model: "tiny-chat", messages: [{role: "user", content: "hello world ".repeat(400)}]
        });
        expect(response.status).toBe(400);
        const body = await jsonOf(response);
        expect(body.error.code).toBe("context_length_exceeded");
        expect(body.error.type).toBe("invalid_request_error");
        expect(body.error.param).toBe("messages");
        expect(body.error.message).toMatch(/maximum context length is 256 tokens\. However, your messages resulted in (at least )?\d+ tokens/);
    });

    it("stops with finish_reason length when the context fills before max_tokens", async () => {
        const completion = await server.client.chat.completions.create({
            model: "tiny-chat", messages: [{role: "user", content: "hello world ".repeat(100)}], max_tokens: 1000
        });
        expect(completion.choices[0].finish_reason).toBe("length");
        expect(completion.usage!.total_tokens).toBe(256);
    });

    it("refuses image parts on a text-only model, naming the part", async () => {
        const response = await server.post("/v1/chat/completions", {
            model: "tiny-chat",
            messages: [{role: "user", content: [{type: "text", text: "what is this"}, {type: "image_url", image_url: {url: "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="}}]}]
        });
        expect(response.status).toBe(400);
        const body = await jsonOf(response);
        expect(body.error.param).toBe("messages[0].content[1]");
        expect(body.error.code).toBe("model_not_multimodal");
        expect(body.error.message).toContain("The model 'tiny-chat' does not take images");
    });
});
