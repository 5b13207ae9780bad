import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LlamaChatEngine } from "../../src/capabilities/chat/llama/LlamaChatEngine.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import { makeTestLlamaGguf } from "../support/gguf/makeTestLlamaGguf.js";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
import { jsonOf, readSse, startTestServer, type TestServer } from "../support/startTestServer.js";
import { testModelsDir, tinyChatModelPath } from "../support/testModels.js";
import path from "node:path";

// Thinking models: the reasoning (`<think>...</think>`) is apart from the answer, as `reasoning_content`.
// A scripted engine makes the output deterministic; the detection runs on generated GGUFs.
const thinking = ["<think>", "Let me", " think", " about it.", "</think>", "\n\n", "Hello", " there."];
let server: TestServer;
beforeAll(async () => {
    server = await startTestServer({
        models: [{id: "thinker", task: "chat", path: tinyChatModelPath}, {id: "plain", task: "chat", path: tinyChatModelPath}],
        factories: {chat: async (entry) => new FakeChatEngine(entry.id, {pieces: thinking, info: entry.id === "thinker" ? {reasoningFormat: "think-tags"} : {}})}
    });
});
afterAll(() => server.stop());

describe("reasoning in chat completions", () => {
    it("not streamed: reasoning_content apart, content without it, reasoning tokens in usage", async () => {
        const completion = await server.client.chat.completions.create({model: "thinker", messages: [{role: "user", content: "hi"}]});
        const message = completion.choices[0].message as typeof completion.choices[0]["message"] & {reasoning_content?: string};
        expect(message.content).toBe("Hello there.");
        expect(message.reasoning_content).toBe("Let me think about it.");
        expect(completion.usage?.completion_tokens_details?.reasoning_tokens).toBe(5);
    });

    it("streamed: delta.reasoning_content first, then delta.content; the tags reach neither", async () => {
        const response = await server.post("/v1/chat/completions", {model: "thinker", messages: [{role: "user", content: "hi"}], stream: true, stream_options: {include_usage: true}});
        const {events} = await readSse(response);
        const chunks = events.filter((event) => event.data !== "[DONE]").map((event) => JSON.parse(event.data));
        const deltas = chunks.flatMap((chunk) => chunk.choices.map((choice: {delta: Record<string, string>}) => choice.delta));
        const reasoning = deltas.map((delta) => delta.reasoning_content ?? "").join("");
        const content = deltas.map((delta) => delta.content ?? "").join("");
        expect(reasoning).toBe("Let me think about it.");
        expect(content).toBe("Hello there.");
        const lastReasoning = deltas.findLastIndex((delta) => delta.reasoning_content != null);
        const firstContent = deltas.findIndex((delta) => (delta.content ?? "") !== "");
        expect(lastReasoning).toBeLessThan(firstContent);
        expect(chunks.at(-1).usage.completion_tokens_details).toEqual({reasoning_tokens: 5});
    });

    it("an earlier assistant turn's reasoning_content is accepted and left out of the prompt", async () => {
        const response = await server.post("/v1/chat/completions", {model: "thinker", messages: [
            {role: "user", content: "hi"}, {role: "assistant", content: "Hello.", reasoning_content: "They greeted me."}, {role: "user", content: "again"}
        ]});
        expect(response.status).toBe(200);
        const bad = await server.post("/v1/chat/completions", {model: "thinker", messages: [{role: "assistant", content: "x", reasoning_content: 5}, {role: "user", content: "y"}]});
        expect(bad.status).toBe(400);
    });

    it("a model that does not think keeps its output as generated", async () => {
        const completion = await server.client.chat.completions.create({model: "plain", messages: [{role: "user", content: "hi"}]});
        expect(completion.choices[0].message.content).toBe(thinking.join(""));
    });
});

describe("detecting a thinking model (generated GGUFs)", () => {
    const qwen3Template = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}" +
        "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}{# <think> </think> #}";
    const r1Template = "{% for message in messages %}{{ message['content'] }}{% endfor %}{% if add_generation_prompt %}{{ '<think>\\n' }}{% endif %}{# </think> #}";

    it("reads <think> in the template (Qwen3-style and DeepSeek-R1-style); a manifest's reasoning: none overrides it", async () => {
        const llama = await loadLlamaRuntime({gpu: "off"});
        const qwen3 = path.join(testModelsDir, "tiny-qwen3-think.gguf");
        const r1 = path.join(testModelsDir, "tiny-r1-think.gguf");
        await makeTestLlamaGguf(qwen3, {seed: 4, chatTemplate: qwen3Template});
        await makeTestLlamaGguf(r1, {seed: 4, chatTemplate: r1Template});
        const options = {contextSize: 256, threads: 1, parallel: 1, queueSize: 1};
        const engines = [
            await LlamaChatEngine.load(llama, {id: "q", modelPath: qwen3, ...options}),
            await LlamaChatEngine.load(llama, {id: "r", modelPath: r1, ...options}),
            await LlamaChatEngine.load(llama, {id: "n", modelPath: qwen3, ...options, reasoning: "none"}),
            await LlamaChatEngine.load(llama, {id: "p", modelPath: tinyChatModelPath, ...options})
        ];
        try {
            expect(engines.map((engine) => engine.info.reasoningFormat)).toEqual(["think-tags", "think-tags", null, null]);
            const job = {turns: [{role: "user" as const, content: "hi"}], n: 1, maxTokens: 1, stop: [], jsonObject: false, jsonSchema: null,
                sampling: {temperature: 0, topP: 1, seed: 1, frequencyPenalty: 0, presencePenalty: 0, logitBias: new Map()}};
            const [qwenRun, r1Run] = await Promise.all([engines[0].submit(job, {signal: new AbortController().signal}), engines[1].submit(job, {signal: new AbortController().signal})]);
            const [[qwenChoice], [r1Choice]] = await Promise.all([qwenRun.done, r1Run.done]);
            // R1's generation prompt opens the block, so its one token is reasoning; Qwen3's output starts undecided,
            // and one token cannot open a block.
            expect([qwenChoice.reasoningTokens, r1Choice.reasoningTokens]).toEqual([0, 1]);
            expect(qwenChoice.reasoning).toBeNull();
        } finally {
            await Promise.all(engines.map((engine) => engine.dispose()));
        }
    });
});

describe("reasoning controls and the other wire formats (scripted thinking model)", () => {
    const fake = async () => (await server.engines.engineFor("thinker", "chat")).engine as unknown as FakeChatEngine;

    it("chat completions: reasoning_effort and chat_template_kwargs reach the engine; a bad effort is a 400 naming it", async () => {
        await server.client.chat.completions.create({model: "thinker", messages: [{role: "user", content: "hi"}], reasoning_effort: "none"});
        expect((await fake()).jobs.at(-1)!.reasoning).toEqual({enabled: false, budgetTokens: null});
        await server.post("/v1/chat/completions", {model: "thinker", messages: [{role: "user", content: "hi"}], reasoning_effort: "low", chat_template_kwargs: {enable_thinking: true, x: 1}});
        expect((await fake()).jobs.at(-1)!.reasoning).toEqual({enabled: true, budgetTokens: 1024, effort: "low"});
        expect((await fake()).jobs.at(-1)!.templateKwargs).toEqual({enable_thinking: true, x: 1});
        const bad = await server.post("/v1/chat/completions", {model: "thinker", messages: [{role: "user", content: "hi"}], reasoning_effort: "huge"});
        expect(bad.status).toBe(400);
        expect((await jsonOf(bad)).error.param).toBe("reasoning_effort");
    });

    it("Responses (openai client): a reasoning item before the message, reasoning tokens in usage; reasoning.effort reaches the engine", async () => {
        const response = await server.client.responses.create({model: "thinker", input: "hi", reasoning: {effort: "medium"}});
        expect((await fake()).jobs.at(-1)!.reasoning).toEqual({enabled: true, budgetTokens: 4096, effort: "medium"});
        expect(response.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
        const reasoning = response.output[0] as {content?: {type: string, text: string}[]};
        expect(reasoning.content).toEqual([{type: "reasoning_text", text: "Let me think about it."}]);
        expect(response.output_text).toBe("Hello there.");
        expect(response.usage?.output_tokens_details.reasoning_tokens).toBe(5);
    });

    it("Responses streamed: reasoning_text deltas, then output_text deltas, in OpenAI's order", async () => {
        const stream = await server.client.responses.create({model: "thinker", input: "hi", stream: true});
        const events: {type: string, delta?: string, output_index?: number}[] = [];
        for await (const event of stream)
            events.push(event as never);
        const types = events.map((event) => event.type);
        const reasoning = events.filter((event) => event.type === "response.reasoning_text.delta").map((event) => event.delta).join("");
        const text = events.filter((event) => event.type === "response.output_text.delta").map((event) => event.delta).join("");
        expect(reasoning).toBe("Let me think about it.");
        expect(text).toBe("Hello there.");
        expect(types.lastIndexOf("response.reasoning_text.delta")).toBeLessThan(types.indexOf("response.output_text.delta"));
        expect(types.indexOf("response.reasoning_text.done")).toBeGreaterThan(types.lastIndexOf("response.reasoning_text.delta"));
        const completed = events.at(-1) as unknown as {type: string, response: {output: {type: string}[]}};
        expect(completed.type).toBe("response.completed");
        expect(completed.response.output.map((item) => item.type)).toEqual(["reasoning", "message"]);
        // Each item's added and done events carry the same output_index.
        const added = events.filter((event) => event.type === "response.output_item.added").map((event) => event.output_index);
        const done = events.filter((event) => event.type === "response.output_item.done").map((event) => event.output_index);
        expect(added).toEqual([0, 1]);
        expect(done).toEqual([0, 1]);
    });

    it("Messages (@anthropic-ai/sdk): a thinking block with a signature before the text; thinking settings reach the engine", async () => {
        const client = new Anthropic({baseURL: server.url, apiKey: "none", maxRetries: 0});
        const message = await client.messages.create({model: "thinker", max_tokens: 2000, messages: [{role: "user", content: "hi"}], thinking: {type: "enabled", budget_tokens: 1500}});
        expect((await fake()).jobs.at(-1)!.reasoning).toEqual({enabled: true, budgetTokens: 1500});
        expect(message.content.map((block) => block.type)).toEqual(["thinking", "text"]);
        const thinking = message.content[0] as {thinking: string, signature: string};
        expect(thinking.thinking).toBe("Let me think about it.");
        expect(thinking.signature.length).toBeGreaterThan(0);
        expect((message.content[1] as {text: string}).text).toBe("Hello there.");

        const streamed = await client.messages.stream({model: "thinker", max_tokens: 100, messages: [{role: "user", content: "hi"}]}).finalMessage();
        expect(streamed.content).toEqual(message.content);

        await client.messages.create({model: "thinker", max_tokens: 100, messages: [{role: "user", content: "hi"}], thinking: {type: "disabled"}});
        expect((await fake()).jobs.at(-1)!.reasoning).toEqual({enabled: false, budgetTokens: null});
        // An earlier turn's thinking block is accepted (and left out of the prompt).
        const followUp = await client.messages.create({model: "thinker", max_tokens: 100, messages: [
            {role: "user", content: "hi"}, {role: "assistant", content: message.content as never}, {role: "user", content: "again"}
        ]});
        expect(followUp.content[1]).toMatchObject({type: "text"});
        expect((await fake()).jobs.at(-1)!.turns.map((turn) => turn.content)).toEqual(["hi", "Hello there.", "again"]);
    });

    it("Messages: a budget that is not below max_tokens is Anthropic's 400 naming thinking.budget_tokens", async () => {
        const response = await server.post("/v1/messages", {model: "thinker", max_tokens: 100, messages: [{role: "user", content: "hi"}], thinking: {type: "enabled", budget_tokens: 100}});
        expect(response.status).toBe(400);
        const body = await jsonOf(response);
        expect(body.type).toBe("error");
        expect(body.error.message).toContain("thinking.budget_tokens");
    });
});
