import fc from "fast-check";
import type { LlamaModel } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chunkedTokenizer } from "../../src/capabilities/chat/llama/chunkedTokenizer.js";
import { PromptRenderThread } from "../../src/capabilities/chat/llama/PromptRenderThread.js";
import { SpecialTokenTexts } from "../../src/capabilities/chat/llama/SpecialTokenTexts.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import { gpt2VocabPath, storiesModelPath, tinyToolsModelPath } from "../support/testModels.js";

// Template text is tokenized in pieces cut before special tokens; the pieces must give exactly the tokens of the whole.
const models: [string, string][] = [["tiny tools (SentencePiece, ChatML control tokens)", tinyToolsModelPath], ["stories260K (SentencePiece)", storiesModelPath], ["GPT-2 (byte-level BPE)", gpt2VocabPath]];
const loaded: LlamaModel[] = [];
afterAll(async () => {
    await Promise.all(loaded.map((model) => model.dispose()));
});

const pieces = fc.constantFrom("<|im_start|>", "<|im_end|>", "<s>", "</s>", "<unk>", "<|endoftext|>", "<tool_call>", "<|im_", "start|>", "user", "\n", " ", "  hello", "é", "x", "{\"a\": 1}");
// Long enough to be cut (pieces of 4 KB).
const templateText = fc.array(pieces, {minLength: 1000, maxLength: 4000}).map((parts) => parts.join(""));

describe.each(models)("chunkedTokenizer on %s", (_, modelPath) => {
    let model: LlamaModel;
    beforeAll(async () => {
        model = await (await loadLlamaRuntime({gpu: "off"})).loadModel({modelPath, vocabOnly: true});
        loaded.push(model);
    });

    it("gives the tokens of the whole text, with and without the leading space trimmed", () => {
        const tokenize = chunkedTokenizer(model, SpecialTokenTexts.of(model));
        fc.assert(fc.property(templateText, fc.constantFrom(undefined, "trimLeadingSpace" as const), (text, trim) => {
            expect(tokenize(text, true, trim)).toEqual(model.tokenizer(text, true, trim));
        }), {numRuns: 60, seed: 20261125});
    });

    it("calls its checkpoint before each piece, and stops when the checkpoint throws (a cancelled render)", () => {
        let calls = 0;
        // Each model's own special tokens among them.
        const text = "<|im_start|>user\nhi<|im_end|>\n<s> x</s><|endoftext|>".repeat(1000);
        expect(chunkedTokenizer(model, SpecialTokenTexts.of(model), () => calls++)(text, true)).toEqual(model.tokenizer(text, true));
        const pieces = calls;
        expect(pieces).toBeGreaterThan(2);
        calls = 0;
        const stopAtSecond = () => {
            if (++calls === 2)
                throw new Error("cancelled");
        };
        expect(() => chunkedTokenizer(model, SpecialTokenTexts.of(model), stopAtSecond)(text, true)).toThrow("cancelled");
        expect(calls).toBe(2);
    });

    it("leaves plain text to the model's tokenizer", () => {
        const tokenize = chunkedTokenizer(model, SpecialTokenTexts.of(model));
        const text = "<|im_start|>user\n".repeat(1000);
        expect(tokenize(text, false)).toEqual(model.tokenizer(text, false));
    });
});

describe("PromptRenderThread", () => {
    const thread = new PromptRenderThread(tinyToolsModelPath);
    afterAll(() => thread.close());
    const request = {kind: "text" as const, text: "<|im_start|>user\nhi<|im_end|>\n".repeat(500), addSpecial: false, parseSpecial: true};

    it("skips a render whose client left before the thread began it, rejecting with the signal's reason, and serves the next", async () => {
        const left = new AbortController();
        left.abort(new Error("the client left"));
        await expect(thread.prepare(request, left.signal)).rejects.toThrow("the client left");
        const prepared = await thread.prepare(request, new AbortController().signal);
        expect(prepared.tokens.length).toBeGreaterThan(1000);
        expect(await thread.prepare(request)).toEqual(prepared);
    });
});

describe("SpecialTokenTexts", () => {
    let specials: SpecialTokenTexts;
    beforeAll(async () => {
        const model = await (await loadLlamaRuntime({gpu: "off"})).loadModel({modelPath: tinyToolsModelPath, vocabOnly: true});
        loaded.push(model);
        specials = SpecialTokenTexts.of(model);
    });

    it("finds control-token text anywhere in a string, and only that", () => {
        expect(specials.hasControlText("say <|im_start|> now")).toBe(true);
        expect(specials.hasControlText("<unk>")).toBe(true);
        expect(specials.hasControlText("<|im_end")).toBe(false);
        expect(specials.hasControlText("<tool_call> is a normal piece of this vocabulary")).toBe(false);
        expect(specials.hasControlText("")).toBe(false);
    });

    it("cuts only right before a special token, at most once per span", () => {
        const text = "<|im_start|>user\nhello<|im_end|>\n".repeat(100);
        const cuts = specials.cuts(text, 300);
        expect(cuts.length).toBeGreaterThan(5);
        for (const [index, cut] of cuts.entries()) {
            expect(text.startsWith("<|im_start|>", cut) || text.startsWith("<|im_end|>", cut)).toBe(true);
            expect(cut - (cuts[index - 1] ?? 0)).toBeGreaterThanOrEqual(300);
        }
    });
});
