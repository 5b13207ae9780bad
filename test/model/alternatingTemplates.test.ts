import fs from "node:fs";
import path from "node:path";
import { Template } from "@huggingface/jinja";
import type { LlamaModel } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChatJob, ChatTurn } from "../../src/capabilities/chat/ChatEngine.js";
import { TemplateRefusedError } from "../../src/capabilities/chat/errors/TemplateRefusedError.js";
import { conversationPrompt } from "../../src/capabilities/chat/llama/conversationPrompt.js";
import { ChatPromptRenderer } from "../../src/capabilities/chat/llama/ChatPromptRenderer.js";
import { LlamaChatEngine } from "../../src/capabilities/chat/llama/LlamaChatEngine.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import { makeTestLlamaGguf } from "../support/gguf/makeTestLlamaGguf.js";
import { promptText, realTemplatesDir } from "../support/realTemplateModels.js";
import { testModelsDir } from "../support/testModels.js";

// Real templates that raise unless roles alternate (Gemma 2, Mistral-Nemo; test/fixtures/templates): node-llama-cpp's
// check of a template renders messages of one role in a row, so such a model did not load at all ("The provided Jinja
// template failed the sanity test: Conversation roles must alternate..."). The renderer then joins them, as the
// template needs: the model loads and answers, and a conversation that alternates renders as the template renders it.
// Ministral-3's passes node-llama-cpp's check (it takes a system message) and raises only on a request's own shape
// (Codex sends two developer messages and two user messages in a row): the renderer joins them when the template raises.

const specs = [
    {id: "gemma-2", file: "google-gemma-2-2b-it.jinja", vocab: {userDefinedVocab: ["<start_of_turn>", "<end_of_turn>"]}, systemRole: false},
    {id: "mistral-nemo", file: "mistralai-Mistral-Nemo-Instruct-2407.jinja", vocab: {controlVocab: ["[INST]", "[/INST]"]}, systemRole: false},
    {id: "ministral-3", file: "mistralai-Ministral-3-14B-Reasoning-2512.jinja",
        vocab: {controlVocab: ["[INST]", "[/INST]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[THINK]", "[/THINK]"]}, systemRole: true}
];

const alternating: ChatTurn[] = [
    {role: "user", content: "Hi"},
    {role: "assistant", content: "Hello!"},
    {role: "user", content: "Tell me about the cat."}
];

function job(turns: ChatTurn[]): ChatJob {
    return {
        turns, n: 1, maxTokens: 4, stop: [], jsonObject: false, jsonSchema: null,
        sampling: {temperature: 0, topP: 1, seed: 7, frequencyPenalty: 0, presencePenalty: 0, logitBias: new Map()}
    };
}

describe.each(specs)("the real $file template ($id), whose roles must alternate", (spec) => {
    const template = fs.readFileSync(path.join(realTemplatesDir, spec.file), "utf8");
    const modelPath = path.join(testModelsDir, `alternating-template-${spec.id}.gguf`);
    let model: LlamaModel;
    let renderer: ChatPromptRenderer;

    /** The template's own rendering (@huggingface/jinja) of these messages, with the generation prompt. */
    const jinja = (messages: ChatTurn[]) => {
        const pieces = model.fileInfo.metadata.tokenizer!.ggml!.tokens as readonly string[];
        return new Template(template).render({
            messages, add_generation_prompt: true, bos_token: pieces[model.tokens.bos!], eos_token: pieces[model.tokens.eos!]
        });
    };
    const rendered = (turns: ChatTurn[]) => promptText(model, renderer.renderTemplate(turns));

    beforeAll(async () => {
        fs.mkdirSync(testModelsDir, {recursive: true});
        await makeTestLlamaGguf(modelPath, {seed: 70, chatTemplate: template, name: `alternating-template-${spec.id}`, ...spec.vocab});
        const llama = await loadLlamaRuntime({gpu: "off"});
        model = await llama.loadModel({modelPath});
        renderer = new ChatPromptRenderer(model);
    });
    afterAll(async () => {
        await model?.dispose();
    });

    it("loads and answers a chat request", async () => {
        const llama = await loadLlamaRuntime({gpu: "off"});
        const engine = await LlamaChatEngine.load(llama, {id: spec.id, modelPath, contextSize: 512, threads: 1, parallel: 1, queueSize: 4});
        try {
            const [choice] = await (await engine.submit(job(alternating), {signal: new AbortController().signal})).done;
            expect(choice.finishReason).toMatch(/^(stop|length)$/);
            expect(choice.completionTokens).toBeGreaterThan(0);
        } finally {
            await engine.dispose();
        }
    });

    it("renders an alternating conversation as the template does", () => {
        expect(rendered(alternating)).toBe(jinja(alternating));
    });

    it("a prefill (an answer's start last) is continued after the generation prompt where the template closes it, as llama-server continues one", () => {
        const prefilled: ChatTurn[] = [...alternating, {role: "assistant", content: "The cat"}];
        const prompt = conversationPrompt(renderer, null, {turns: prefilled}, undefined, false);
        expect(promptText(model, prompt.rendered)).toBe(jinja(alternating) + "The cat");
    });

    it("joins two user messages in a row into the one turn the template can take", () => {
        const text = rendered([{role: "user", content: "First part."}, {role: "user", content: "Second part."}]);
        expect(() => jinja([{role: "user", content: "First part."}, {role: "user", content: "Second part."}])).toThrow(/alternate/);
        expect(text).toBe(jinja([{role: "user", content: "First part.\n\nSecond part."}]));
    });

    // The tests of a template that takes a system message (Ministral-3's), and of those that do not: only the ones that apply.
    if (spec.systemRole) {
        it("two system messages and two user messages in a row (Codex's first request): each pair joined", () => {
            const turns: ChatTurn[] = [{role: "system", content: "Rules."}, {role: "system", content: "More rules."}, {role: "user", content: "Context."}, {role: "user", content: "Say hello."}];
            expect(() => jinja(turns)).toThrow(/alternate/);
            expect(rendered(turns)).toBe(jinja([{role: "system", content: "Rules.\n\nMore rules."}, {role: "user", content: "Context.\n\nSay hello."}]));
        });

        it("a shape joining cannot mend (an answer first): the template's own message, as a TemplateRefusedError", () => {
            const turns: ChatTurn[] = [{role: "assistant", content: "Hello!"}, {role: "user", content: "Hi"}];
            expect(() => renderer.renderTemplate(turns)).toThrow(TemplateRefusedError);
            expect(() => renderer.renderTemplate(turns)).toThrow(/roles must alternate user and assistant/);
        });
    } else {
        it("keeps a system message where the template puts it, else in the first user turn", () => {
            // Mistral-Nemo's template writes it into the last user message (the one that ends the list: the reply to come
            // is the generation prompt, not a message); Gemma 2's refuses one, and gets node-llama-cpp's conversion, the
            // system text at the start of the first user turn.
            const withSystem: ChatTurn[] = [{role: "system", content: "Be brief."}, ...alternating];
            expect(rendered(withSystem)).toBe(spec.id === "mistral-nemo" ? jinja(withSystem)
                : jinja([{role: "user", content: "### System message\n\nBe brief.\n\n----\n\nHi"}, ...alternating.slice(1)]));
        });
    }
});
