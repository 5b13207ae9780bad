import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getLlama, LlamaLogLevel, type Llama, type LlamaModel } from "node-llama-cpp";
import { ChatPromptRenderer } from "../../src/capabilities/chat/llama/ChatPromptRenderer.js";
import { llamaLabelTokenizer } from "../../src/capabilities/chat/llama/llamaTokenizerParts.js";
import { decisionLabels } from "../../src/capabilities/chat/shared/decisionLabels.js";
import { decisionPrompt, decisionTokens, isSmallDecision } from "../../src/capabilities/chat/llama/decisionPrompt.js";
import { PromptRenderThread } from "../../src/capabilities/chat/llama/PromptRenderThread.js";
import { conversationPrompt } from "../../src/capabilities/chat/llama/conversationPrompt.js";
import { realTemplateModels } from "../support/realTemplateModels.js";
import { tinyChatModelPath, tinyPlainModelPath } from "../support/testModels.js";

// A decision job's prompt: the shared prefix and a question's suffix are, together, the conversation with the question
// at the end of its last user turn, as the template renders it (thinking off for a thinking model).
let llama: Llama;
const models: LlamaModel[] = [];
const load = async (modelPath: string) => {
    const model = await llama.loadModel({modelPath});
    models.push(model);
    return model;
};

beforeAll(async () => {
    llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
});
afterAll(async () => {
    for (const model of models)
        await model.dispose();
});

describe("decisionPrompt", () => {
    it("cuts the rendered conversation where the question goes", async () => {
        const model = await load(tinyChatModelPath);
        const renderer = new ChatPromptRenderer(model);
        const turns = [{role: "system" as const, content: "Be strict."}, {role: "user" as const, content: "Charged twice."}];
        const {prefix, suffixOf} = decisionPrompt(model, renderer, null, turns);
        const suffix = suffixOf("Refund?");
        // The same tokens as the chat prompt of that conversation.
        expect([...prefix, ...suffix]).toEqual(renderer.render([turns[0], {role: "user", content: "Charged twice.\n\nRefund?"}]));
        // The prefix is the same for every question: only the suffix changes.
        expect(decisionPrompt(model, renderer, null, turns).prefix).toEqual(prefix);
        // After an assistant turn the question is a user turn of its own.
        const after = decisionPrompt(model, renderer, null, [...turns, {role: "assistant", content: "Noted."}]);
        expect([...after.prefix, ...after.suffixOf("Refund?")]).toEqual(renderer.render([...turns, {role: "assistant", content: "Noted."}, {role: "user", content: "Refund?"}]));
    });

    it("turns thinking off for a thinking model (Qwen3's template)", async () => {
        const qwen3 = realTemplateModels.find((entry) => entry.id === "qwen3")!;
        const model = await load(qwen3.path);
        const renderer = new ChatPromptRenderer(model);
        const {prefix, suffixOf} = decisionPrompt(model, renderer, "think-tags", [{role: "user", content: "Charged twice."}]);
        // The tokens chat renders for that conversation with thinking off (Qwen3's template closes an empty think block).
        const chat = conversationPrompt(renderer, "think-tags", {turns: [{role: "user", content: "Charged twice.\n\nRefund?"}], reasoning: {enabled: false, budgetTokens: null}}, undefined, false);
        expect([...prefix, ...suffixOf("Refund?")]).toEqual(chat.tokens);
        expect(model.detokenize(chat.tokens, true)).toMatch(/<think>\s*<\/think>\s*$/);
    });

    it("without a template: the turns' text, a blank line, the question and a line break", async () => {
        const model = await load(tinyPlainModelPath);
        const {prefix, suffixOf} = decisionPrompt(model, new ChatPromptRenderer(model), null, [{role: "user", content: "Charged twice."}]);
        expect(model.detokenize([...prefix, ...suffixOf("Refund?")], true)).toBe("<s> Charged twice.\n\nRefund?\n");
    });

    it("labels are single tokens, one character each, capitals first", async () => {
        const model = await load(tinyChatModelPath);
        const {singles: labels} = decisionLabels(llamaLabelTokenizer(model));
        expect(labels.slice(0, 3).map((label) => label.text)).toEqual(["A", "B", "C"]);
        for (const label of labels) {
            expect(model.tokenize(label.text, false, "trimLeadingSpace")).toEqual([label.token]);
            // Its spellings: the label alone, and with the leading space a SentencePiece answer starts with (`▁A`).
            for (const token of label.tokens)
                expect(model.detokenize([token]).trim()).toBe(label.text);
        }
        expect(labels[0].tokens).toEqual([labels[0].token, ...model.tokenize("A", false)]);
        const all = labels.flatMap((label) => label.tokens);
        expect(new Set(all).size).toBe(all.length);
    });

    it("beyond the single labels, pairs of a letter and a digit written as exactly those two tokens, letter by letter", async () => {
        for (const path of [tinyChatModelPath, tinyPlainModelPath]) {
            const model = await load(path);
            const {singles, pairs} = decisionLabels(llamaLabelTokenizer(model));
            expect(pairs.length).toBeGreaterThan(singles.length);
            expect(pairs.slice(0, 3).map((pair) => pair.text)).toEqual(["A0", "A1", "A2"]);
            for (const pair of pairs)
                expect(model.tokenize(pair.text, false, "trimLeadingSpace")).toEqual([pair.first.token, pair.second]);
            expect(new Set(pairs.map((pair) => pair.text)).size).toBe(pairs.length);
        }
    });
});

describe("a large decision job in the render thread", () => {
    const thread = new PromptRenderThread(tinyChatModelPath);
    afterAll(() => thread.close());
    // Over the main thread's budget (isSmallDecision): many turns and long question text.
    const turns = Array.from({length: 60}, (_, index) => ({role: index % 2 === 0 ? "user" as const : "assistant" as const, content: `turn ${index} about the parcel`}));
    const texts = Array.from({length: 300}, (_, index) => `Question ${index}: is the parcel late?\n\nOptions:\nA. yes\nB. no`);

    it("gives the main thread's tokens; a client that left stops it with the signal's reason", async () => {
        const model = await load(tinyChatModelPath);
        const renderer = new ChatPromptRenderer(model);
        expect(isSmallDecision(renderer, null, turns, texts)).toBe(false);
        expect(isSmallDecision(renderer, null, turns.slice(0, 3), texts.slice(0, 3))).toBe(true);
        const left = new AbortController();
        left.abort(new Error("the client left"));
        await expect(thread.decisionTokens(null, turns, texts, left.signal)).rejects.toThrow("the client left");
        const fromThread = await thread.decisionTokens(null, turns, texts, new AbortController().signal);
        const onMain = decisionTokens(model, renderer, null, turns, texts);
        expect(fromThread.prefix).toEqual(onMain.prefix);
        expect(fromThread.suffixes).toEqual(onMain.suffixes);
        expect(onMain.suffixes).toHaveLength(300);
    });
});
