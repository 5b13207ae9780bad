import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSse, startTestServer, type TestServer } from "../support/startTestServer.js";
import { storiesGreedyText, storiesModelPath } from "../support/testModels.js";

// stories260K: a real model whose greedy continuation of the bare prompt (BOS) is known.
// Without a chat template, the prompt is BOS + the message contents (see ChatPromptRenderer).
const eos = "2";

describe("stories260K (real weights, models/demo)", () => {
    let server: TestServer;
    beforeAll(async () => {
        server = await startTestServer({
            models: [
                {id: "stories-260k", task: "chat", path: storiesModelPath!, family: "stories", aliases: ["gpt-3.5-turbo"], contextSize: 512},
                // Where answers of different requests are compared token for token: the model's pool of earlier requests' text
                // drafts greedy requests (speculation), and a draft verified in one batch can decide a near-tie the other way.
                {id: "stories-plain", task: "chat", path: storiesModelPath!, contextSize: 512, speculative: "off"}
            ]
        });
    });
    afterAll(() => server?.stop());

    const ask = (fields: Record<string, unknown>) => server.client.chat.completions.create({
        model: "gpt-3.5-turbo", messages: [{role: "user", content: ""}], temperature: 0, max_tokens: 40, ...fields
    });

    it("reproduces the known greedy text", async () => {
        const completion = await ask({max_tokens: 60});
        expect(completion.model).toBe("stories-260k");
        expect(completion.choices[0].message.content!.startsWith(storiesGreedyText)).toBe(true);
        expect(completion.usage!.prompt_tokens).toBe(1);
    });

    it("cuts at a stop sequence, which is not part of the content", async () => {
        const completion = await ask({stop: ["Lily", "never appears"]});
        expect(completion.choices[0].message.content).toBe("Once upon a time, there was a little girl named ");
        expect(completion.choices[0].finish_reason).toBe("stop");
    });

    it("never streams part of a stop sequence", async () => {
        const response = await server.post("/v1/chat/completions", {
            model: "stories-260k", messages: [{role: "user", content: ""}], temperature: 0, max_tokens: 40, stream: true,
            stop: "named Lily"
        });
        const {events} = await readSse(response);
        const deltas = events.slice(0, -1).map((event) => JSON.parse(event.data).choices[0]?.delta?.content ?? "");
        expect(deltas.join("")).toBe("Once upon a time, there was a little girl ");
        expect(deltas.some((delta: string) => delta.includes("named"))).toBe(false);
        expect(JSON.parse(events.at(-2)!.data).choices[0].finish_reason).toBe("stop");
    });

    it("a stop sequence that only appears across the end of generation is still cut", async () => {
        const completion = await ask({max_tokens: 12, stop: ["little"]});
        expect(completion.choices[0].message.content).toBe("Once upon a time, there was a ");
        expect(completion.choices[0].finish_reason).toBe("stop");
    });

    it("reports finish_reason length at max_tokens and counts the generated tokens", async () => {
        // stories260K separates stories with BOS, which is not an end-of-generation token, so
        // greedy decoding runs to the limit.
        const completion = await ask({max_tokens: 300});
        expect(completion.choices[0].finish_reason).toBe("length");
        expect(completion.usage!.completion_tokens).toBe(300);
        expect(completion.choices[0].message.content!.startsWith(storiesGreedyText)).toBe(true);
    });

    it("logit_bias 100 on EOS ends generation at once", async () => {
        const completion = await ask({logit_bias: {[eos]: 100}});
        expect(completion.choices[0]).toMatchObject({finish_reason: "stop", message: {content: ""}});
    });

    it("frequency and presence penalties change greedy output by discouraging repeats", async () => {
        const countRepeats = (text: string) => {
            const words = text.split(/\s+/).filter(Boolean);
            return words.length - new Set(words).size;
        };
        const plain = (await ask({max_tokens: 120, logit_bias: {[eos]: -100}})).choices[0].message.content!;
        const frequency = (await ask({max_tokens: 120, logit_bias: {[eos]: -100}, frequency_penalty: 2})).choices[0].message.content!;
        const presence = (await ask({max_tokens: 120, logit_bias: {[eos]: -100}, presence_penalty: 2})).choices[0].message.content!;
        const encouraged = (await ask({max_tokens: 120, logit_bias: {[eos]: -100}, frequency_penalty: -2})).choices[0].message.content!;
        expect(frequency).not.toBe(plain);
        expect(presence).not.toBe(plain);
        expect(countRepeats(frequency)).toBeLessThan(countRepeats(plain));
        expect(countRepeats(presence)).toBeLessThan(countRepeats(plain));
        expect(countRepeats(encouraged)).toBeGreaterThan(countRepeats(plain));
    });

    it("llama-server's and vLLM's sampling fields: top_k 1 and min_p 1 give the greedy text at temperature 1, on chat and completions", async () => {
        for (const seed of [1, 2, 3]) {
            for (const fields of [{top_k: 1}, {min_p: 1}]) {
                const chat = await ask({temperature: 1, seed, max_tokens: 60, ...fields});
                expect(chat.choices[0].message.content!.startsWith(storiesGreedyText), JSON.stringify(fields)).toBe(true);
                const completion = await server.client.completions.create({model: "stories-260k", prompt: "", temperature: 1, seed, max_tokens: 60, ...fields});
                expect(completion.choices[0].text.startsWith(storiesGreedyText), JSON.stringify(fields)).toBe(true);
            }
        }
        // Without them the same seeds wander off the greedy text.
        const unconstrained = await Promise.all([1, 2, 3].map(async (seed) => (await ask({temperature: 1, seed, max_tokens: 60})).choices[0].message.content!));
        expect(unconstrained.some((text) => !text.startsWith(storiesGreedyText))).toBe(true);
    });

    it("repeat_penalty (llama-server) or repetition_penalty (vLLM) discourages repeats within repeat_last_n tokens", async () => {
        const countRepeats = (text: string) => {
            const words = text.split(/\s+/).filter(Boolean);
            return words.length - new Set(words).size;
        };
        const long = {model: "stories-plain", max_tokens: 120, logit_bias: {[eos]: -100}};
        const plain = (await ask(long)).choices[0].message.content!;
        const penalized = (await ask({...long, repeat_penalty: 1.5})).choices[0].message.content!;
        expect(countRepeats(penalized)).toBeLessThan(countRepeats(plain));
        expect((await ask({...long, repetition_penalty: 1.5})).choices[0].message.content).toBe(penalized);
        // A window of none, or a penalty of 1, is no penalty.
        expect((await ask({...long, repeat_penalty: 1.5, repeat_last_n: 0})).choices[0].message.content).toBe(plain);
        expect((await ask({...long, repeat_penalty: 1})).choices[0].message.content).toBe(plain);
        // The window matters: the last 2 tokens only is not llama.cpp's default 64; -1 is the whole context so far
        // (the prompt, here BOS alone, and the 120 tokens), which is not the default 64 either.
        expect((await ask({...long, repeat_penalty: 1.5, repeat_last_n: 2})).choices[0].message.content).not.toBe(penalized);
        const whole = (await ask({...long, repeat_penalty: 1.5, repeat_last_n: -1})).choices[0].message.content;
        expect(whole).not.toBe(penalized);
        expect(whole).not.toBe(plain);
        expect((await ask({...long, repeat_penalty: 1.5, repeat_last_n: 1000})).choices[0].message.content).toBe(whole);
    });

    it("refuses the two names of the repetition penalty with different values, and the fields out of range, naming them", async () => {
        const refused = async (fields: Record<string, unknown>) => {
            const response = await server.post("/v1/chat/completions", {model: "stories-260k", messages: [{role: "user", content: ""}], max_tokens: 1, ...fields});
            expect(response.status).toBe(400);
            return ((await response.json()) as {error: {param: string}}).error;
        };
        expect(await refused({repeat_penalty: 1.1, repetition_penalty: 1.2})).toMatchObject({param: "repetition_penalty"});
        expect(await refused({min_p: 1.5})).toMatchObject({param: "min_p"});
        expect(await refused({top_k: -2})).toMatchObject({param: "top_k"});
        expect(await refused({repeat_penalty: 0})).toMatchObject({param: "repeat_penalty"});
        expect((await ask({repeat_penalty: 1.1, repetition_penalty: 1.1, max_tokens: 2})).choices).toHaveLength(1);
    });

    it("ignore_eos runs on past end-of-generation to max_tokens, even when logit_bias would force EOS", async () => {
        const forced = await ask({logit_bias: {[eos]: 100}, max_tokens: 20});
        expect(forced.choices[0]).toMatchObject({finish_reason: "stop", message: {content: ""}});
        const ignored = await ask({logit_bias: {[eos]: 100}, max_tokens: 20, ignore_eos: true});
        expect(ignored.choices[0].finish_reason).toBe("length");
        expect(ignored.usage!.completion_tokens).toBe(20);
        const completion = await server.client.completions.create({model: "stories-260k", prompt: "", temperature: 0, max_tokens: 20,
            logit_bias: {[eos]: 100}, ...{ignore_eos: true}});
        expect(completion.choices[0].finish_reason).toBe("length");
        expect(completion.usage!.completion_tokens).toBe(20);
    });

    it("continues the text of the messages, joined by a blank line", async () => {
        const completion = await ask({messages: [{role: "user", content: "Once upon a time, there was a little girl named"}], max_tokens: 2});
        expect(completion.choices[0].message.content).toBe(" Lily.");
    });
});
