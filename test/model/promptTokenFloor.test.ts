import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LlamaModel } from "node-llama-cpp";
import { PromptTokenFloor } from "../../src/capabilities/chat/llama/PromptTokenFloor.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import { gpt2VocabPath, storiesModelPath, tinyChatModelPath } from "../support/testModels.js";

// The floor must never exceed the real token count (it refuses prompts before tokenizing them).
const models: [string, string, boolean][] = [["stories260K (SentencePiece)", storiesModelPath, false], ["tiny chat (SentencePiece)", tinyChatModelPath, false], ["GPT-2 (byte-level BPE)", gpt2VocabPath, true]];
const loaded: LlamaModel[] = [];
afterAll(async () => {
    await Promise.all(loaded.map((model) => model.dispose()));
});

const text = fc.oneof(
    fc.string({unit: "grapheme", maxLength: 400}),
    fc.string({unit: fc.constantFrom(" ", "\n", "-", "=", "a", "e", "é", "日", "😀", "the", "    "), maxLength: 300}).map((pieces) => pieces),
    fc.nat({max: 5000}).map((length) => " ".repeat(length)),
    fc.nat({max: 2000}).map((length) => "=".repeat(length))
);

describe.each(models)("PromptTokenFloor on %s", (_, modelPath, vocabOnly) => {
    let model: LlamaModel;
    let floor: PromptTokenFloor;
    beforeAll(async () => {
        model = await (await loadLlamaRuntime({gpu: "off"})).loadModel({modelPath, vocabOnly});
        loaded.push(model);
        floor = new PromptTokenFloor(model);
    });

    it("has a bound, and never exceeds the tokenizer's own count", () => {
        expect(floor.longestPieceBytes).toBeGreaterThan(0);
        fc.assert(fc.property(fc.array(text, {minLength: 1, maxLength: 3}), (contents) => {
            const tokens = contents.reduce((sum, content) => sum + model.tokenize(content).length, 0);
            expect(floor.of({turns: contents.map((content) => ({role: "user" as const, content})), rawPrompt: null})).toBeLessThanOrEqual(tokens);
        }), {numRuns: 300, seed: 20261124});
    });

    it("refuses by length alone: 10 MB of text is far more than any context", () => {
        const tenMegabytes = "word ".repeat(2 * 1024 * 1024);
        expect(floor.of({turns: [{role: "user", content: tenMegabytes}], rawPrompt: null})).toBeGreaterThan(1024 * 1024 * 10 / floor.longestPieceBytes! - 1);
    });
});
