import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { LlamaModel } from "node-llama-cpp";
import type { ChatRunHooks } from "../../src/capabilities/chat/ChatEngine.js";
import { afterAll, describe, expect, it } from "vitest";
import { ChatPromptRenderer } from "../../src/capabilities/chat/llama/ChatPromptRenderer.js";
import { ChoiceOutput } from "../../src/capabilities/chat/llama/ChoiceOutput.js";
import { conversationPrompt } from "../../src/capabilities/chat/llama/conversationPrompt.js";
import { detectReasoningFormat } from "../../src/capabilities/chat/llama/detectReasoningFormat.js";
import { argumentsReader } from "../../src/capabilities/chat/llama/parseToolCalls.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import { makeTestLlamaGguf } from "../support/gguf/makeTestLlamaGguf.js";
import { realTemplatesDir } from "../support/realTemplateModels.js";
import { testModelsDir } from "../support/testModels.js";

// What real models write, as llama.cpp's own tests have it (test/fixtures/llama-cpp-chat: tests/test-chat.cpp's tool-call
// vectors, each a model's output and the calls llama.cpp reads from it), through the server's whole reading of an
// answer (ChoiceOutput: the reasoning apart, then the calls), on every vendored real template the server serves tools
// for. A vector whose template is not vendored here, or whose model the server does not serve tools for, is not run.
type Vector = {template: string, text: string, enableThinking: boolean, tools: string[], content: string | null, calls: [string, unknown][]};
const {tools: schemas, vectors}: {tools: Record<string, Record<string, unknown>>, vectors: Vector[]} =
    JSON.parse(fs.readFileSync(path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/llama-cpp-chat/vectors.json"), "utf8"));
const templates = [...new Set(vectors.map((vector) => vector.template))].filter((file) => fs.existsSync(path.join(realTemplatesDir, file)));

/** Outputs this server reads otherwise than llama.cpp does (a template, and how the output starts), each with the reason (docs/api.md says so too). */
const knownDifferences: {file: string, starts: string, reason: string}[] = [
    {file: "Kimi-K2-Thinking.jinja", starts: "<think>I need to call two functions<|tool_call_begin|>",
        reason: "calls inside a thought without the section's opening token and without their closing tokens: llama.cpp reads both; here the thought ends at no call (Kimi's calls start with the section's token)"},
];

/** Vendored templates whose calls the server does not read (docs/api.md's list). */
const notServed = new Set(["Kimi-K3.jinja", "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", "mistralai-Mistral-Nemo-Instruct-2407.jinja"]);

const models = new Map<string, LlamaModel>();
afterAll(async () => {
    for (const model of models.values())
        await model.dispose();
});

async function rendererOf(file: string) {
    let model = models.get(file);
    if (model == null) {
        const modelPath = path.join(testModelsDir, `vectors-${file}.gguf`);
        fs.mkdirSync(testModelsDir, {recursive: true});
        await makeTestLlamaGguf(modelPath, {seed: 85, chatTemplate: fs.readFileSync(path.join(realTemplatesDir, file), "utf8"), contextLength: 8192});
        model = await (await loadLlamaRuntime({gpu: "off"})).loadModel({modelPath});
        models.set(file, model);
    }
    return {model, renderer: new ChatPromptRenderer(model)};
}

const calls = (list: readonly {name: string, arguments: string}[] | undefined) => list?.map((call) => [call.name, JSON.parse(call.arguments)]) ?? [];

describe.each(templates)("llama.cpp's vectors: %s", (file) => {
    it.each(vectors.filter((vector) => vector.template === file).map((vector, index) => [index, vector] as const))("vector %i", async (_index, vector) => {
        const {model, renderer} = await rendererOf(file);
        const format = renderer.toolCallFormat;
        // Tools are served on every template but those docs/api.md lists as not read (a request with tools gets a 400).
        expect(format == null, file).toBe(notServed.has(file));
        if (format == null)
            return;
        const reasoningFormat = detectReasoningFormat(model);
        const functions = vector.tools.map((name) => ({name, parameters: schemas[name]}));
        const {start} = conversationPrompt(renderer, reasoningFormat, {turns: [{role: "user", content: "Hello"}],
            reasoning: {enabled: vector.enableThinking, budgetTokens: null}}, functions, false);
        // Streamed as a client gets it, in pieces of 3 characters: the content and calls must be the whole answer's.
        const streamed = {content: "", calls: [] as {name: string, arguments: string}[]};
        const hooks: ChatRunHooks = {
            signal: new AbortController().signal,
            onText: (_choice, text) => void (streamed.content += text),
            onToolCall: (_choice, event) => event.type === "call" ? void streamed.calls.push({name: event.name, arguments: ""}) : void (streamed.calls[event.index].arguments += event.fragment)
        };
        const output = new ChoiceOutput(0, hooks, {format, names: new Set(functions.map((fn) => fn.name)), forced: false, read: argumentsReader(format, functions)},
            reasoningFormat == null ? null : {format: reasoningFormat, start}, false);
        for (let at = 0; at < vector.text.length; at += 3)
            output.push(vector.text.slice(at, at + 3));
        const result = output.finish({text: vector.text, finishReason: "stop", completionTokens: 1, cachedPromptTokens: 0});
        if (knownDifferences.some((known) => known.file === file && vector.text.startsWith(known.starts))) {
            // Still a difference: a mended one is taken off the list.
            const same = JSON.stringify(calls(result.toolCalls)) === JSON.stringify(vector.calls) && (vector.content == null || result.text.trim() === vector.content.trim());
            expect(same, vector.text).toBe(false);
            return;
        }
        expect(calls(result.toolCalls), vector.text).toEqual(vector.calls);
        expect(calls(streamed.calls), vector.text).toEqual(vector.calls);
        expect(streamed.content.trim(), vector.text).toBe(result.text.trim());
        if (vector.content != null)
            expect(result.text.trim(), vector.text).toBe(vector.content.trim());
    });
});
