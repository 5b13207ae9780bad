import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { gemma4Tags, ThinkSplitter } from "../../src/capabilities/chat/llama/text/ThinkSplitter.js";

// Gemma 4's markup after the answer began, as llama.cpp's gemma4 parser reads it (common/parsers/gemma4.cpp: "Gemma 4 may
// emit an extra <|channel>thought\n<channel|> at the end of the content. It may also emit a single trailing <channel|>
// token"; a lone `<|channel>` before a thought is consumed): none of it is content.
describe("Gemma 4's markup after the answer", () => {
    const split = (text: string, pre = false) => ThinkSplitter.split(text, pre, gemma4Tags);
    it("a trailing close tag, an extra empty thought block, a later thought: not content", () => {
        expect(split("Hello<channel|>")).toEqual({reasoning: "", content: "Hello"});
        expect(split("<|channel>thought\nI think<channel|>Hello<channel|>")).toEqual({reasoning: "I think", content: "Hello"});
        expect(split("Hello<|channel>thought\n<channel|>")).toEqual({reasoning: "", content: "Hello"});
        expect(split("Hello <|channel>thought\nmore<channel|>world")).toEqual({reasoning: "more", content: "Hello world"});
        expect(split("<|channel><|channel>thought\nx<channel|>Hi")).toEqual({reasoning: "x", content: "Hi"});
        // Think tags are unchanged: a `</think>` in the answer stays.
        expect(ThinkSplitter.split("Hi</think>", false)).toEqual({reasoning: "", content: "Hi</think>"});
    });

    it("streams to the same split however the text is cut", () => {
        const texts = ["Hello<channel|>", "Hello<|channel>thought\n<channel|>", "<|channel>thought\na<channel|>b<|channel>thought\nc<channel|>d", "a <|chan b", "x<channel"];
        fc.assert(fc.property(fc.constantFrom(...texts), fc.array(fc.nat({max: 60}), {maxLength: 8}), (text, cuts) => {
            const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
            const bounds = [0, ...points, text.length];
            const splitter = new ThinkSplitter(false, gemma4Tags);
            let reasoning = "", content = "";
            const ranges: [number, number][] = [];
            for (const piece of bounds.slice(1).map((end, index) => text.slice(bounds[index], end))) {
                const out = splitter.push(piece);
                reasoning += out.reasoning;
                content += out.content;
                ranges.push(...out.contentRanges ?? []);
            }
            const rest = splitter.flush();
            ranges.push(...rest.contentRanges ?? []);
            expect({reasoning: (reasoning + rest.reasoning).trim(), content: content + rest.content}).toEqual(split(text));
            // The ranges are where the content was.
            expect(ranges.map(([start, end]) => text.slice(start, end)).join("")).toBe(content + rest.content);
        }), {numRuns: 400, seed: 7});
    });
});
