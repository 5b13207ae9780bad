import { describe, expect, it } from "vitest";
import { splitAtLength } from "../../../src/capabilities/speech/splitAtLength.js";
import { splitSentences } from "../../../src/capabilities/speech/splitSentences.js";

describe("splitSentences", () => {
    it("splits at . ! ? ; and line breaks, keeping the punctuation with its sentence", () => {
        expect(splitSentences("Hello there. How are you? Great!  Fine; thanks\nNew line\n\nLast one"))
            .toEqual(["Hello there.", "How are you?", "Great!", "Fine;", "thanks", "New line", "Last one"]);
    });

    it("keeps abbreviations, initials, decimals, versions and addresses inside their sentence", () => {
        expect(splitSentences("Dr. Smith paid $3.14 for it, e.g. on Jan. 5 at example.com. J. R. R. Tolkien wrote v1.2.3 too."))
            .toEqual(["Dr. Smith paid $3.14 for it, e.g. on Jan. 5 at example.com.", "J. R. R. Tolkien wrote v1.2.3 too."]);
    });

    it("keeps runs of ends and closing quotes together", () => {
        expect(splitSentences("He said \"Stop!\" Then left... Really?! (Yes.) Ok…")).toEqual(["He said \"Stop!\"", "Then left...", "Really?!", "(Yes.)", "Ok…"]);
    });

    it("splits CJK text at full-width ends without spaces", () => {
        expect(splitSentences("今天天气很好。我们去公园吧！你觉得呢？好的；走吧")).toEqual(["今天天气很好。", "我们去公园吧！", "你觉得呢？", "好的；", "走吧"]);
    });

    it("merges a piece without letters or digits into the sentence before it, and drops empty input", () => {
        expect(splitSentences("Wait. ... ?! Go.")).toEqual(["Wait....?!", "Go."]);
        expect(splitSentences("   \n\n ")).toEqual([]);
        expect(splitSentences("...")).toEqual(["..."]);
    });

    it("cuts an over-long sentence at commas, else spaces, never inside a word, every piece within the limit", () => {
        const long = "one two three four five, six seven eight nine ten eleven twelve, thirteen fourteen fifteen sixteen seventeen";
        const pieces = splitSentences(long, 40);
        expect(pieces).toEqual(["one two three four five,", "six seven eight nine ten eleven twelve,", "thirteen fourteen fifteen sixteen", "seventeen"]);
        const words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore".repeat(20);
        for (const piece of splitSentences(words, 50)) {
            expect(piece.length).toBeLessThanOrEqual(50);
            expect(words).toContain(piece);
        }
        expect(splitSentences(words, 50).join(" ").split(" ")).toEqual(words.split(" "));
    });

    it("cuts a single word longer than the limit at the limit (the only way to fit the model)", () => {
        expect(splitAtLength("abcdefghij", 4)).toEqual(["abcd", "efgh", "ij"]);
        expect(splitAtLength("短句没有标点符号但是非常长", 5)).toEqual(["短句没有标", "点符号但是", "非常长"]);
    });

    it("splits 4096 characters of prose into pieces that together hold every word", () => {
        const text = "The quick brown fox jumps over the lazy dog. Mr. Brown's 2.5 kg cat sleeps; the dog barks! ".repeat(45).slice(0, 4096);
        const pieces = splitSentences(text, 300);
        expect(pieces.length).toBeGreaterThan(100);
        expect(pieces.join(" ").split(/\s+/u)).toEqual(text.trim().split(/\s+/u));
        expect(pieces.every((piece) => piece.length <= 300)).toBe(true);
    });
});
