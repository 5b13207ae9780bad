import fs from "node:fs";
import path from "node:path";
import { Template } from "@huggingface/jinja";
import type { LlamaModel } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatPromptRenderer } from "../../src/capabilities/chat/llama/ChatPromptRenderer.js";
import { conversationPrompt } from "../../src/capabilities/chat/llama/conversationPrompt.js";
import { detectReasoningFormat } from "../../src/capabilities/chat/llama/detectReasoningFormat.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import { makeTestLlamaGguf } from "../support/gguf/makeTestLlamaGguf.js";
import { promptText, realTemplatesDir } from "../support/realTemplateModels.js";
import { testModelsDir } from "../support/testModels.js";

// A prefill (an answer's start last) on a template that closes the message and writes its own markup before an answer,
// in a thought format this server does not read (Kimi-K3's `<|open|>think<|sep|>...<|close|>think<|sep|><|open|>response<|sep|>`):
// the template's own rendering of the conversation, cut after the prefill's text (transformers' continue_final_message),
// with the reasoning sent with the prefill where the template writes it. Found by review: the prefill went right after
// the generation prompt, inside the thought it opens.
describe("a prefill on Kimi-K3's real template", () => {
    const template = fs.readFileSync(path.join(realTemplatesDir, "Kimi-K3.jinja"), "utf8");
    let model: LlamaModel;
    beforeAll(async () => {
        const modelPath = path.join(testModelsDir, "prefill-kimi-k3.gguf");
        fs.mkdirSync(testModelsDir, {recursive: true});
        await makeTestLlamaGguf(modelPath, {seed: 86, chatTemplate: template, contextLength: 4096});
        model = await (await loadLlamaRuntime({gpu: "off"})).loadModel({modelPath});
    }, 60_000);
    afterAll(async () => {
        await model?.dispose();
    });

    it("is the template's rendering cut after the prefill's text, its answer markup and the prefill's reasoning kept", () => {
        const renderer = new ChatPromptRenderer(model);
        const prompt = conversationPrompt(renderer, detectReasoningFormat(model), {turns: [{role: "user", content: "Hi"},
            {role: "assistant", content: "The cat", reasoning: "Cats."}]}, undefined, false);
        const pieces = model.fileInfo.metadata.tokenizer!.ggml!.tokens as readonly string[];
        const whole = new Template(template).render({messages: [{role: "user", content: "Hi"}, {role: "assistant", content: "The cat", reasoning_content: "Cats."}],
            add_generation_prompt: false, bos_token: pieces[model.tokens.bos!], eos_token: pieces[model.tokens.eos!]});
        const reference = whole.slice(0, whole.lastIndexOf("The cat") + "The cat".length);
        expect(reference).toMatch(/response.*The cat$/s);
        expect(promptText(model, prompt.rendered) + prompt.tail).toBe(reference);
        expect(prompt.start).toBe("answer");
    });
});
