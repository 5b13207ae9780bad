import { Template } from "@huggingface/jinja";
import type { LlamaModel } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ChatJob, ChatTurn, TokenLogprob } from "../../src/capabilities/chat/ChatEngine.js";
import { ChatPromptRenderer } from "../../src/capabilities/chat/llama/ChatPromptRenderer.js";
import { conversationPrompt } from "../../src/capabilities/chat/llama/conversationPrompt.js";
import { LlamaChatEngine } from "../../src/capabilities/chat/llama/LlamaChatEngine.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import { promptText, realTemplateModels } from "../support/realTemplateModels.js";

// The real chat templates of thinking models (test/fixtures/templates) on the engine: the prompt is the template's own
// rendering (what @huggingface/jinja, the renderer the model authors target, makes of it with add_generation_prompt),
// thinking on and off; and a model scripted to think "I think" then answer "Hello world" (realTemplateModels) has its
// thought in the reasoning and its answer in the content, and logprobs of the answer only.

const turns: ChatTurn[] = [
    {role: "system", content: "Be brief."},
    {role: "user", content: "Hi"},
    {role: "assistant", content: "Hello!"},
    {role: "user", content: "Tell me about the cat."}
];

/** How each template's generation prompt ends: thinking on (the model's default), and off. */
const endings: Record<string, {on: string, off: string}> = {
    "qwen3": {on: "<|im_start|>assistant\n", off: "<|im_start|>assistant\n<think>\n\n</think>\n\n"},
    "qwen3-2507": {on: "<|im_start|>assistant\n<think>\n", off: "<|im_start|>assistant\n<think>\n\n</think>\n\n"},
    "qwq": {on: "<|im_start|>assistant\n<think>\n", off: "<|im_start|>assistant\n<think>\n\n</think>\n\n"},
    "r1-distill": {on: "<｜Assistant｜><think>\n", off: "<｜Assistant｜><think>\n\n</think>\n\n"},
    "glm-4.5": {on: "Tell me about the cat.<|assistant|>", off: "Tell me about the cat./nothink<|assistant|>\n<think></think>"},
    "gemma4": {on: "<|turn>model\n", off: "<|turn>model\n<|channel>thought\n<channel|>"},
    "gpt-oss": {on: "<|start|>assistant", off: "<|start|>assistant<|channel|>final<|message|>"}
};

function job(overrides: Partial<ChatJob> = {}): ChatJob {
    return {
        turns, n: 1, maxTokens: 24, stop: [], jsonObject: false, jsonSchema: null,
        sampling: {temperature: 0, topP: 1, seed: 7, frequencyPenalty: 0, presencePenalty: 0, logitBias: new Map()},
        ...overrides
    };
}

const off = {reasoning: {enabled: false, budgetTokens: null}};

describe.each(realTemplateModels)("the real $file template ($id)", (spec) => {
    let model: LlamaModel;
    let renderer: ChatPromptRenderer;
    let engine: LlamaChatEngine;

    beforeAll(async () => {
        const llama = await loadLlamaRuntime({gpu: "off"});
        model = await llama.loadModel({modelPath: spec.path});
        renderer = new ChatPromptRenderer(model);
        engine = await LlamaChatEngine.load(llama, {id: spec.id, modelPath: spec.path, contextSize: 1024, threads: 1, parallel: 1, queueSize: 4});
    });
    afterAll(async () => {
        await engine?.dispose();
        await model?.dispose();
    });

    it("is detected as a thinking model of its format", () => {
        expect(engine.info.reasoningFormat).toBe(spec.format);
        expect(renderer.hasThinkingSwitch).toBe(spec.switch);
    });

    it("the prompt is the template's rendering with add_generation_prompt, as @huggingface/jinja renders it, thinking on and off", async () => {
        // gpt-oss's template writes today's date (strftime_now): the same clock for both renders.
        vi.useFakeTimers({toFake: ["Date"], now: new Date("2025-08-05T12:00:00Z")});
        try {
            const pieces = model.fileInfo.metadata.tokenizer!.ggml!.tokens as readonly string[];
            const reference = (enableThinking: boolean) => new Template(spec.template).render({
                messages: turns, add_generation_prompt: true, enable_thinking: enableThinking,
                bos_token: pieces[model.tokens.bos!], eos_token: pieces[model.tokens.eos!]
            });
            for (const enabled of [true, false]) {
                const prompt = conversationPrompt(renderer, spec.format, job(enabled ? {} : off), undefined, false);
                const text = promptText(model, prompt.rendered) + prompt.tail;
                expect(text.endsWith(enabled ? endings[spec.id].on : endings[spec.id].off)).toBe(true);
                if (enabled || spec.switch)
                    expect(text).toBe(reference(enabled));
                else {
                    // No switch in the template: its rendering, then the engine closes the thought (or opens the final channel).
                    expect(promptText(model, prompt.rendered)).toBe(reference(false));
                    expect(prompt.tail).toBe(spec.format === "harmony" ? "<|channel|>final<|message|>" : "\n</think>\n\n");
                }
                expect(await engine.countPromptTokens(job(enabled ? {} : off))).toBe(prompt.tokens.length);
            }
            if (spec.switch)
                expect(await engine.countPromptTokens(job({templateKwargs: {enable_thinking: false}}))).toBe(await engine.countPromptTokens(job(off)));
        } finally {
            vi.useRealTimers();
        }
    });

    it("thinking on: the thought is the reasoning, the answer the content, as they stream", async () => {
        const reasoning: string[] = [];
        const content: string[] = [];
        const [choice] = await (await engine.submit(job(), {
            signal: new AbortController().signal, onReasoning: (_index, text) => reasoning.push(text), onText: (_index, text) => content.push(text)
        })).done;
        expect(choice.reasoning).toBe("I think");
        expect(choice.text).toBe("Hello world");
        expect(choice.finishReason).toBe("stop");
        expect(choice.reasoningTokens).toBe(spec.tokens.reasoning);
        expect(choice.completionTokens).toBe(spec.tokens.completion);
        expect(reasoning.join("").trim()).toBe("I think");
        expect(content.join("")).toBe("Hello world");
    });

    it("an assistant message of whitespace last is the reply to come, not a prefill (found by review)", async () => {
        const blank = conversationPrompt(renderer, spec.format, job({turns: [...turns, {role: "assistant", content: " "}]}), undefined, false);
        const plain = conversationPrompt(renderer, spec.format, job(), undefined, false);
        expect(promptText(model, blank.rendered) + blank.tail).toBe(promptText(model, plain.rendered) + plain.tail);
        expect(blank.start).toBe(plain.start);
    });

    it("a conversation ending with the answer's start (a prefill) is continued: where the template leaves it open, else after the generation prompt (as llama-server continues one)", async () => {
        const prefilled = job({turns: [...turns, {role: "assistant", content: "Hello"}]});
        const prompt = conversationPrompt(renderer, spec.format, prefilled, undefined, false);
        const [choice] = await (await engine.submit(prefilled, {signal: new AbortController().signal})).done;
        const text = promptText(model, prompt.rendered) + prompt.tail;
        expect(text.trimEnd().endsWith("Hello")).toBe(true);
        expect({tail: prompt.tail, start: prompt.start}).toEqual({tail: "", start: "answer"});
        expect(choice.reasoning).toBeNull();
        expect(choice.text).toBe(" world");
        // Where the template closes it (DeepSeek-R1's), the thought its generation prompt opens is closed before the text,
        // as llama-server writes it (`<think></think>Hello`).
        const plain = conversationPrompt(renderer, spec.format, job(), undefined, false);
        const plainText = promptText(model, plain.rendered) + plain.tail;
        if (spec.id === "r1-distill")
            expect(text).toBe(plainText.trimEnd() + "</think>Hello");
        // A prefill that opens a thought (R1's usual "<think>\n") goes on as reasoning; one that only looks like the
        // template's own text ("assistant") changes nothing. gpt-oss's is continued in its final channel (as llama-server
        // continues one), where "<think>" is text.
        for (const content of ["<think>\n", "assistant"]) {
            const other = conversationPrompt(renderer, spec.format, job({turns: [...turns, {role: "assistant", content}]}), undefined, false);
            expect({tail: other.tail, start: other.start}).toEqual({tail: "", start: content === "<think>\n" && spec.format === "think-tags" ? "reasoning" : "answer"});
        }
    });

    it("thinking off: the answer straight away, no reasoning", async () => {
        const [choice] = await (await engine.submit(job(off), {signal: new AbortController().signal})).done;
        expect(choice.reasoning).toBeNull();
        expect(choice.reasoningTokens).toBe(0);
        expect(choice.text).toBe("Hello world");
    });

    it("logprobs are the answer's tokens only: joined they are the content, streamed and not", async () => {
        const streamed: TokenLogprob[] = [];
        const [choice] = await (await engine.submit(job({logprobs: 2}), {
            signal: new AbortController().signal, onText: (_index, _text, logprobs) => streamed.push(...logprobs ?? [])
        })).done;
        expect(choice.reasoning).toBe("I think");
        expect(choice.logprobs!.map((entry) => entry.token).join("")).toBe(choice.text);
        expect(streamed.map((entry) => entry.token)).toEqual(choice.logprobs!.map((entry) => entry.token));
        expect(choice.logprobs!.every((entry) => entry.topLogprobs.length === 2)).toBe(true);
    });
});

describe("logprobs of a thinking model's JSON answer (the thought before it is free)", () => {
    it.each(realTemplateModels.filter((spec) => ["qwen3", "r1-distill"].includes(spec.id)))("$id", async (spec) => {
        const llama = await loadLlamaRuntime({gpu: "off"});
        const engine = await LlamaChatEngine.load(llama, {id: spec.id, modelPath: spec.path, contextSize: 1024, threads: 1, parallel: 1, queueSize: 4});
        try {
            const streamed: TokenLogprob[] = [];
            const [choice] = await (await engine.submit(job({jsonObject: true, logprobs: 1, maxTokens: 40, turns: [{role: "user", content: "Answer in json."}]}), {
                signal: new AbortController().signal, onText: (_index, _text, logprobs) => streamed.push(...logprobs ?? [])
            })).done;
            expect(choice.reasoning).toContain("I think");
            expect(choice.text.trimStart().startsWith("{")).toBe(true);
            expect(choice.logprobs!.map((entry) => entry.token).join("")).toBe(choice.text);
            expect(streamed.map((entry) => entry.token).join("")).toBe(choice.text);
            expect(choice.logprobs!.length).toBe(choice.completionTokens - choice.reasoningTokens!);
        } finally {
            await engine.dispose();
        }
    });
});

describe("after tool results, the reply starts with the template's generation prompt too", () => {
    // node-llama-cpp continues the reply after the results in the template's own format, which it learnt from the
    // template's last assistant turn (Qwen3's closed think block): the engine puts the generation prompt there.
    const toolTurns: ChatTurn[] = [
        {role: "user", content: "Weather in Paris?"},
        {role: "assistant", content: "", toolCalls: [{name: "get_weather", arguments: {city: "Paris"}, result: "sunny"}]}
    ];
    const functions = [{name: "get_weather", description: "The weather in a city", parameters: {type: "object", properties: {city: {type: "string"}}}}];
    const referenceMessages = [
        {role: "user", content: "Weather in Paris?"},
        {role: "assistant", content: "", tool_calls: [{type: "function", function: {name: "get_weather", arguments: {city: "Paris"}}}]},
        {role: "tool", content: "sunny"}
    ];

    it.each(realTemplateModels.filter((spec) => ["qwen3", "qwen3-2507", "qwq", "glm-4.5"].includes(spec.id)))("$id", async (spec) => {
        const llama = await loadLlamaRuntime({gpu: "off"});
        const model = await llama.loadModel({modelPath: spec.path});
        try {
            const renderer = new ChatPromptRenderer(model);
            expect(renderer.toolCallFormat).not.toBeNull();
            for (const enabled of [true, false]) {
                const prompt = conversationPrompt(renderer, spec.format, job({turns: toolTurns, ...enabled ? {} : off}), functions, false);
                const text = promptText(model, prompt.rendered) + prompt.tail;
                const reference = new Template(spec.template).render({
                    messages: referenceMessages, tools: functions.map((fn) => ({type: "function", function: fn})), add_generation_prompt: true, enable_thinking: enabled
                }) + (enabled || spec.switch ? "" : "\n</think>\n\n");
                // What follows the tool's result: the end of its turn and the generation prompt.
                const after = (rendered: string) => rendered.slice(rendered.lastIndexOf("sunny") + "sunny".length);
                expect(after(text)).toBe(after(reference));
            }
        } finally {
            await model.dispose();
        }
    });
});

function escapeRegExp(text: string) {
    return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
