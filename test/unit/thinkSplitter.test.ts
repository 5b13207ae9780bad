import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ThinkSplitter } from "../../src/capabilities/chat/llama/text/ThinkSplitter.js";

describe("ThinkSplitter", () => {
    it("a call in a thought the model never closes is the answer's; one quoted in a thought that closes is the thought's: in any pieces", () => {
        const starts = ["<tool_call>"];
        const cases: [string, {reasoning: string, content: string}][] = [
            ["Need to look.\n<tool_call>\n{\"name\": \"ls\"}\n</tool_call>", {reasoning: "Need to look.", content: "<tool_call>\n{\"name\": \"ls\"}\n</tool_call>"}],
            ["Maybe <tool_call>x</tool_call>, no.</think>Answer.", {reasoning: "Maybe <tool_call>x</tool_call>, no.", content: "Answer."}],
            ["Plain thought.</think><tool_call>y</tool_call>", {reasoning: "Plain thought.", content: "<tool_call>y</tool_call>"}]
        ];
        for (const [text, expected] of cases)
            for (const size of [1, 2, 5, 100]) {
                const splitter = new ThinkSplitter(true, undefined, starts);
                const out = {reasoning: "", content: ""};
                for (let at = 0; at < text.length; at += size) {
                    const piece = splitter.push(text.slice(at, at + size));
                    out.reasoning += piece.reasoning;
                    out.content += piece.content;
                }
                const rest = splitter.flush();
                expect({reasoning: (out.reasoning + rest.reasoning).trim(), content: out.content + rest.content}, `${size}: ${text}`).toEqual(expected);
            }
    });

    it("splits reasoning from the answer; the tags reach neither side", () => {
        expect(ThinkSplitter.split("<think>\nLet me see.\n</think>\n\nThe answer is 4.", false)).toEqual({reasoning: "Let me see.", content: "The answer is 4."});
        expect(ThinkSplitter.split("Let me see.</think>The answer.", true)).toEqual({reasoning: "Let me see.", content: "The answer."});
        expect(ThinkSplitter.split("Just an answer.", false)).toEqual({reasoning: "", content: "Just an answer."});
        expect(ThinkSplitter.split("<think>\n\n</think>\n\nNo thinking.", false)).toEqual({reasoning: "", content: "No thinking."});
        expect(ThinkSplitter.split("<think>cut short", false)).toEqual({reasoning: "cut short", content: ""});
    });

    it("streams to the same split however the text is cut into pieces", () => {
        const texts = ["<think>a < b, and </thi is not a tag</think>\nSo: a.", "  <think>x</think>y", "plain <think> in the answer", "r1 style</think>answer"];
        fc.assert(fc.property(fc.constantFrom(...texts), fc.array(fc.nat({max: 40}), {maxLength: 8}), fc.boolean(), (text, cuts, pre) => {
            const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
            const bounds = [0, ...points, text.length];
            const pieces = bounds.slice(1).map((end, index) => text.slice(bounds[index], end));
            const splitter = new ThinkSplitter(pre);
            let reasoning = "";
            let content = "";
            for (const piece of pieces) {
                const out = splitter.push(piece);
                reasoning += out.reasoning;
                content += out.content;
            }
            const rest = splitter.flush();
            const whole = ThinkSplitter.split(text, pre);
            expect({reasoning: (reasoning + rest.reasoning).trim(), content: content + rest.content}).toEqual(whole);
        }), {numRuns: 500, seed: 7});
    });
});
