import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LlamaChatEngine } from "../../src/capabilities/chat/llama/LlamaChatEngine.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import { makeTestLlamaGguf } from "../support/gguf/makeTestLlamaGguf.js";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
import { readSse, startTestServer, type TestServer } from "../support/startTestServer.js";
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
            const [qwenRun, r1Run] = [engines[0].submit(job, {signal: new AbortController().signal}), engines[1].submit(job, {signal: new AbortController().signal})];
            await Promise.all([qwenRun.done, r1Run.done]);
            // node-llama-cpp's Jinja wrapper keeps a generation prompt's "<think>" out of the rendered context (it treats it as
            // the start of a thought segment), so neither prompt ends inside an open block here.
            expect([qwenRun.startsInReasoning, r1Run.startsInReasoning]).toEqual([false, false]);
        } finally {
            await Promise.all(engines.map((engine) => engine.dispose()));
        }
    });
});
