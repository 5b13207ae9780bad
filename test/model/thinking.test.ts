import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChatJob } from "../../src/capabilities/chat/ChatEngine.js";
import { LlamaChatEngine } from "../../src/capabilities/chat/llama/LlamaChatEngine.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import { makeTestLlamaGguf, toolCallVocab, toolsChatTemplate } from "../support/gguf/makeTestLlamaGguf.js";
import { testModelsDir } from "../support/testModels.js";

// A thinking model on the real engine: a generated GGUF with Qwen3's thinking switch in its template and <think>/</think> in its
// vocabulary. Random weights never close a think block by themselves in a few tokens, so logit bias and budgets drive the output:
// what is asserted (the split, where the grammar applies, the budget, the prompt the switch renders) does not depend on the weights.
const thinkingTemplate = "{%- if greeting is defined %}{{- greeting }}{%- endif %}" + toolsChatTemplate.replace(
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}",
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}{%- endif %}"
);
// DeepSeek-R1's way: the generation prompt opens the block.
const r1Template = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}" +
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n<think>\\n' }}{% endif %}{# </think> #}";
const modelPath = path.join(testModelsDir, "tiny-thinking-qwen3.gguf");
const r1Path = path.join(testModelsDir, "tiny-thinking-r1.gguf");
let engine: LlamaChatEngine;
let r1: LlamaChatEngine;
let thinkOpen: number;
let thinkClose: number;
let pieces: number[][];

beforeAll(async () => {
    await makeTestLlamaGguf(modelPath, {seed: 11, chatTemplate: thinkingTemplate, extraVocab: toolCallVocab, userDefinedVocab: ["<think>", "</think>"]});
    await makeTestLlamaGguf(r1Path, {seed: 12, chatTemplate: r1Template, userDefinedVocab: ["<think>", "</think>"]});
    const llama = await loadLlamaRuntime({gpu: "off"});
    engine = await LlamaChatEngine.load(llama, {id: "thinker", modelPath, contextSize: 512, threads: 1, parallel: 2, queueSize: 4});
    r1 = await LlamaChatEngine.load(llama, {id: "r1", modelPath: r1Path, contextSize: 512, threads: 1, parallel: 1, queueSize: 4});
    const tokens = (text: string) => model.tokenize(text, true, "trimLeadingSpace");
    const model = await llama.loadModel({modelPath});
    pieces = [tokens("<think>"), tokens("</think>")];
    [[thinkOpen], [thinkClose]] = pieces;
    await model.dispose();
});
afterAll(async () => {
    await engine?.dispose();
    await r1?.dispose();
});

function job(overrides: Partial<ChatJob> = {}): ChatJob {
    return {
        turns: [{role: "user", content: "Tell me about the cat."}], n: 1, maxTokens: 24, stop: [], jsonObject: false, jsonSchema: null,
        sampling: {temperature: 0, topP: 1, seed: 7, frequencyPenalty: 0, presencePenalty: 0, logitBias: new Map()},
        ...overrides
    };
}

const neverClose = () => new Map([[thinkClose, -100]]);

describe("a thinking model on the engine", () => {
    it("is detected from its template and vocabulary; <think> and </think> are single tokens", () => {
        expect(engine.info.reasoningFormat).toBe("think-tags");
        expect(pieces.map((tokens) => tokens.length)).toEqual([1, 1]);
    });

    it("closes the think block at the budget: reasoning apart, the answer after it, reasoning tokens counted", async () => {
        const reasoning: string[] = [];
        const content: string[] = [];
        // R1's template opens the block, so the output starts inside it; the model is kept from closing it itself.
        const run = await r1.submit(job({reasoning: {enabled: true, budgetTokens: 6}, sampling: {...job().sampling, logitBias: neverClose()}}),
            {signal: new AbortController().signal, onReasoning: (_i, text) => reasoning.push(text), onText: (_i, text) => content.push(text)});
        const [choice] = await run.done;
        // Six tokens of thought and the closing tag the engine wrote; then the answer, to max_tokens.
        expect(choice.reasoningTokens).toBe(7);
        expect(choice.completionTokens).toBe(24);
        expect(choice.finishReason).toBe("length");
        expect(choice.reasoning).toBeTruthy();
        expect(reasoning.join("").trim()).toBe(choice.reasoning);
        expect(content.join("")).toBe(choice.text);
        expect(choice.text.length).toBeGreaterThan(0);
        expect(`${choice.reasoning}${choice.text}`).not.toMatch(/<\/?think>/);
    });

    it("without a budget the thought goes on (the same model, the same prompt): all reasoning, no answer", async () => {
        const [choice] = await (await r1.submit(job({sampling: {...job().sampling, logitBias: neverClose()}}), {signal: new AbortController().signal})).done;
        expect(choice.text).toBe("");
        expect(choice.reasoningTokens).toBe(24);
    });

    it("JSON mode: the model thinks freely (the grammar does not apply inside the block), then the answer is JSON", async () => {
        const [choice] = await (await engine.submit(job({
            jsonObject: true, maxTokens: 80, turns: [{role: "user", content: "Answer in json."}],
            reasoning: {enabled: true, budgetTokens: 8},
            sampling: {...job().sampling, logitBias: neverClose()}
        }), {signal: new AbortController().signal})).done;
        // The engine opened the block (a grammar follows): eight tokens of unconstrained thought, the closing tag, then JSON.
        expect(choice.reasoningTokens).toBe(9);
        expect(choice.reasoning).toBeTruthy();
        expect(choice.reasoning!.trim().startsWith("{")).toBe(false);
        expect(choice.text.startsWith("{")).toBe(true);
        if (choice.finishReason === "stop")
            expect(typeof JSON.parse(choice.text)).toBe("object");
    });

    it("JSON mode when the model closes its thought at once: empty reasoning, JSON answer", async () => {
        const [choice] = await (await engine.submit(job({
            jsonObject: true, maxTokens: 80, turns: [{role: "user", content: "Answer in json."}],
            sampling: {...job().sampling, logitBias: new Map([[thinkClose, 100]])}
        }), {signal: new AbortController().signal})).done;
        expect(choice.reasoning).toBeNull();
        expect(choice.text.trimStart().startsWith("{")).toBe(true);
    });

    it("forced tools after the thought: a call parsed from the answer, reasoning apart", async () => {
        const weather = {name: "get_weather", schema: {type: "object", properties: {city: {type: "string", maxLength: 8}}, required: ["city"], additionalProperties: false}};
        const [choice] = await (await engine.submit(job({
            maxTokens: 120,
            tools: {functions: [{name: weather.name, parameters: weather.schema}], choice: {type: "forced", functions: [weather], parallel: false}},
            reasoning: {enabled: true, budgetTokens: 5},
            sampling: {...job().sampling, logitBias: neverClose()}
        }), {signal: new AbortController().signal})).done;
        expect(choice.reasoning).toBeTruthy();
        expect(choice.reasoningTokens).toBe(6);
        expect(choice.finishReason).toBe("tool_calls");
        expect(choice.toolCalls).toHaveLength(1);
        expect(choice.toolCalls![0].name).toBe("get_weather");
        expect(typeof JSON.parse(choice.toolCalls![0].arguments).city).toBe("string");
    });

    it("thinking off: the template's switch renders an empty block, so the output is all answer", async () => {
        const on = await engine.countPromptTokens(job());
        const off = await engine.countPromptTokens(job({reasoning: {enabled: false, budgetTokens: null}}));
        const viaKwargs = await engine.countPromptTokens(job({templateKwargs: {enable_thinking: false}}));
        expect(off).toBeGreaterThan(on);
        expect(viaKwargs).toBe(off);
        const [choice] = await (await engine.submit(job({reasoning: {enabled: false, budgetTokens: null}, sampling: {...job().sampling, logitBias: new Map([[thinkOpen, -100]])}}),
            {signal: new AbortController().signal})).done;
        expect(choice.reasoning).toBeNull();
        expect(choice.reasoningTokens).toBe(0);
        expect(choice.text.length).toBeGreaterThan(0);
    });

    it("chat_template_kwargs reach the template", async () => {
        expect(await engine.countPromptTokens(job({templateKwargs: {greeting: "hello hello hello"}}))).toBeGreaterThan(await engine.countPromptTokens(job()));
    });

    it("greedy output is the same with and without a budget that is never reached", async () => {
        const run = async (budgetTokens: number | null) => (await engine.submit(job({reasoning: {enabled: true, budgetTokens}, sampling: {...job().sampling, logitBias: neverClose()}}),
            {signal: new AbortController().signal})).done;
        const [[a], [b]] = await Promise.all([run(null), run(1000)]);
        expect(b.text).toBe(a.text);
        expect(b.reasoning).toBe(a.reasoning);
    });
});

describe("a client that leaves before a large prompt is counted or tokenized", () => {
    // 40 messages: more than the main thread renders itself (isSmallPrompt), so the render thread does, and reads the
    // request's cancel flag before it begins.
    const large = () => job({turns: Array.from({length: 40}, (_, index) => ({role: "user" as const, content: `message ${index}`}))});

    it("count_tokens and tokenize stop with the signal's reason; the same requests still answer afterwards", async () => {
        const left = new AbortController();
        left.abort(new Error("the client left"));
        await expect(engine.countPromptTokens(large(), left.signal)).rejects.toThrow("the client left");
        await expect(engine.tokenize({kind: "prompt", job: large()}, {withPieces: false, signal: left.signal})).rejects.toThrow("the client left");
        const counted = await engine.countPromptTokens(large(), new AbortController().signal);
        expect(counted).toBeGreaterThan(40 * 4);
        // A large prompt's list comes back as its JSON, written in the render thread.
        const tokenized = await engine.tokenize({kind: "prompt", job: large()}, {withPieces: false});
        expect("json" in tokenized && tokenized.count).toBe(counted);
        expect("json" in tokenized && JSON.parse(Buffer.from(tokenized.json).toString())).toHaveLength(counted);
    });
});

describe("a harmony model (gpt-oss's channels) on the engine", () => {
    // gpt-oss's framing, simplified: a system message with the effort, messages as <|start|>ROLE<|message|>TEXT<|end|>, and the
    // generation prompt <|start|>assistant, after which the model writes <|channel|>analysis<|message|>... then the final channel.
    const harmonyTemplate = "{{- '<|start|>system<|message|>Reasoning: ' + (reasoning_effort if reasoning_effort is defined else 'medium') + '<|end|>' }}" +
        "{%- for message in messages %}{{- '<|start|>' + message['role'] + '<|message|>' + message['content'] + '<|end|>' }}{%- endfor %}" +
        "{%- if add_generation_prompt %}{{- '<|start|>assistant' }}{%- endif %}";
    const harmonyPath = path.join(testModelsDir, "tiny-thinking-harmony.gguf");
    // With <|return|> and <|call|> in the vocabulary llama.cpp treats <|end|> as gpt-oss's (not an end of generation, not rendered).
    const harmonyTokens = ["<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|return|>", "<|call|>"];
    let harmony: LlamaChatEngine;
    /** Random weights would write framing tokens anywhere: the test keeps the model from writing any itself. */
    let noFraming: Map<number, number>;
    let finalHeader: number;

    beforeAll(async () => {
        await makeTestLlamaGguf(harmonyPath, {seed: 13, chatTemplate: harmonyTemplate, userDefinedVocab: harmonyTokens});
        const llama = await loadLlamaRuntime({gpu: "off"});
        const model = await llama.loadModel({modelPath: harmonyPath});
        noFraming = new Map(harmonyTokens.map((token) => [model.tokenize(token, true, "trimLeadingSpace")[0], -100]));
        finalHeader = model.tokenize("<|end|><|start|>assistant<|channel|>final<|message|>", true, "trimLeadingSpace").length;
        await model.dispose();
        harmony = await LlamaChatEngine.load(llama, {id: "harmony", modelPath: harmonyPath, contextSize: 512, threads: 1, parallel: 1, queueSize: 4});
    });
    afterAll(() => harmony?.dispose());

    it("is detected as harmony", () => {
        expect(harmony.info.reasoningFormat).toBe("harmony");
    });

    it("JSON mode: the analysis channel is free, the budget ends it with the final channel's header, and the answer is JSON", async () => {
        const reasoning: string[] = [];
        const [choice] = await (await harmony.submit(job({
            jsonObject: true, maxTokens: 60, turns: [{role: "user", content: "Answer in json."}],
            reasoning: {enabled: true, budgetTokens: 5}, sampling: {...job().sampling, logitBias: noFraming}
        }), {signal: new AbortController().signal, onReasoning: (_i, text) => reasoning.push(text)})).done;
        expect(choice.reasoningTokens).toBe(5 + finalHeader);
        expect(choice.reasoning).toBeTruthy();
        expect(reasoning.join("").trim()).toBe(choice.reasoning);
        expect(`${choice.reasoning}${choice.text}`).not.toMatch(/<\|(channel|message|start|end)\|>/);
        expect(choice.text.startsWith("{")).toBe(true);
    });

    it("thinking off opens the final channel: all answer; the effort reaches the template's variable", async () => {
        const off = job({reasoning: {enabled: false, budgetTokens: null}});
        expect(await harmony.countPromptTokens(off)).toBeGreaterThan(await harmony.countPromptTokens(job()));
        const [choice] = await (await harmony.submit(off, {signal: new AbortController().signal})).done;
        expect(choice.reasoning).toBeNull();
        expect(choice.reasoningTokens).toBe(0);
        expect(choice.text.length).toBeGreaterThan(0);
        // "Reasoning: low" and "Reasoning: medium" (the template's default) are different prompts.
        const low = await harmony.countPromptTokens(job({reasoning: {enabled: true, budgetTokens: 1024, effort: "low"}}));
        expect(low).not.toBe(await harmony.countPromptTokens(job()));
        expect(low).toBe(await harmony.countPromptTokens(job({templateKwargs: {reasoning_effort: "low"}})));
    });
});
