import fc from "fast-check";
import { describe, expect, it } from "vitest";

// The playground's Markdown parser in linear time, and its streamed rendering with bounded work per piece: a model's
// output can be hostile (`"[a](".repeat(20000)` took 4.9 s to parse with the regular expression it replaced, again on
// every streamed piece). Growth is measured with the parser's own step counter (positions scanned, lines read), never
// with a clock: twice the input is at most about twice the steps, and the steps stay under a few per character.
type MdNode = {tag: string, attrs?: Record<string, string>, children: MdChild[]};
type MdChild = MdNode | string;
type Meter = {steps: number};
type Cuts = {scanned: number, seen: number, inFence: boolean, paragraphOpen: boolean, cut: number};
const markdownModule = "../../playground/markdown.js";
const streamModule = "../../playground/markdownStream.js";
const {isSpace, parseInline, parseMarkdown, safeHref} = await import(markdownModule) as {
    isSpace(code: number): boolean, parseInline(text: string, meter?: Meter): MdChild[],
    parseMarkdown(text: string, meter?: Meter): MdNode[], safeHref(url: string): string | null
};
const {advanceCuts, startCuts} = await import(streamModule) as {advanceCuts(cuts: Cuts, text: string, meter?: Meter): void, startCuts(): Cuts};

/** The regular expression the scanner replaced, as the reference of what inline Markdown becomes (fine on short texts). */
function referenceInline(text: string): MdChild[] {
    const out: MdChild[] = [];
    let last = 0;
    for (const match of text.matchAll(/`([^`]+)`|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*|\[([^\]]+)\]\(([^)\s]+)\)/g)) {
        const at = match.index;
        if (at > last)
            out.push(text.slice(last, at));
        const [whole, code, strong, em, label, url] = match;
        const href = url != null ? safeHref(url) : null;
        out.push(code != null ? {tag: "code", children: [code]}
            : strong != null ? {tag: "strong", children: referenceInline(strong)}
                : em != null ? {tag: "em", children: referenceInline(em)}
                    : href == null ? whole : {tag: "a", attrs: {href}, children: referenceInline(label)});
        last = at + whole.length;
    }
    if (last < text.length)
        out.push(text.slice(last));
    return out;
}

const stepsOf = (text: string) => {
    const meter = {steps: 0};
    parseMarkdown(text, meter);
    return meter.steps;
};
const repeatTo = (unit: string, length: number) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);

describe("the playground's Markdown parser, in linear time", () => {
    it("reads `\\s` as JavaScript's regular expressions do, for every UTF-16 code unit", () => {
        const differ = Array.from({length: 0x10000}, (_, code) => code).filter((code) => isSpace(code) !== /\s/.test(String.fromCharCode(code)));
        expect(differ).toEqual([]);
    });

    it("parses inline Markdown exactly as the regular expression it replaced", () => {
        const piece = fc.constantFrom("`", "*", "**", "[", "]", "(", ")", "](", "a", "b", " ", "\n", "\t", "\u00a0", "\u2028",
            "https://x.y/z", "mailto:m@x", "javascript:alert(1)", "_", "<b>", "\ud83d", "\ude00");
        fc.assert(fc.property(fc.array(piece, {maxLength: 40}), (pieces) => {
            const text = pieces.join("");
            expect(parseInline(text)).toEqual(referenceInline(text));
        }), {numRuns: 3000, seed: 29});
    });

    // The brief's shapes, 100 KB each: unclosed links, bold markers, backticks, nested emphasis, long lines of `_`.
    const shapes = ["[a](", "[a](h", "[", "**", "`", "*a", "*a **b [c](", "_", "[a]((", "](", "> [a](", "- **a [", "*a\n", "``\n"];
    it.each(shapes)("%j repeated to 100 KB: at most 6 steps a character, and twice the text at most 2.1 times the steps", (unit) => {
        const half = stepsOf(repeatTo(unit, 50_000));
        const whole = stepsOf(repeatTo(unit, 100_000));
        expect(whole).toBeLessThanOrEqual(6 * 100_000);
        expect(whole).toBeLessThanOrEqual(2.1 * half + 100);
    });

    it("any repeated pattern of Markdown's markers grows linearly", () => {
        const marker = fc.constantFrom("[", "]", "(", ")", "a", " ", "*", "**", "`", "_", "\n", "\n\n", "> ", "- ", "1. ", "# ", "```", "https://x");
        fc.assert(fc.property(fc.array(marker, {minLength: 1, maxLength: 8}), (markers) => {
            const unit = markers.join("");
            const half = stepsOf(repeatTo(unit, 20_000));
            const whole = stepsOf(repeatTo(unit, 40_000));
            expect(whole).toBeLessThanOrEqual(6 * 40_000);
            expect(whole).toBeLessThanOrEqual(2.1 * half + 100);
        }), {numRuns: 60, seed: 29});
    });
});

/** Parses `text` as the streamed view does: cut where advanceCuts allows after each piece, each part parsed apart. */
function parseInParts(text: string, ends: number[], meter?: Meter) {
    const cuts = startCuts();
    const blocks: MdNode[] = [];
    let frozen = 0;
    for (const end of [...ends, text.length]) {
        advanceCuts(cuts, text.slice(0, end), meter);
        if (cuts.cut > frozen) {
            blocks.push(...parseMarkdown(text.slice(frozen, cuts.cut)));
            frozen = cuts.cut;
        }
    }
    return {blocks: [...blocks, ...parseMarkdown(text.slice(frozen))], tail: text.length - frozen};
}

describe("streamed Markdown, cut into parts that stay rendered", () => {
    it("the parts parse as the whole text, however the text arrives", () => {
        const line = fc.constantFrom("- a", "* b", "1. c", "2) d", "> q", ">", "# h", "#### h4", "```js", "```", "  ```", "", "   ", "text",
            "more *text*", "**bold** and `code`", "[l](https://x)", "a\u2028b", "#no", "-no", "\tindented");
        const end = fc.constantFrom("\n", "\n", "\n", "\r\n", "\r");
        fc.assert(fc.property(fc.array(fc.tuple(line, end), {maxLength: 30}), fc.array(fc.nat(), {maxLength: 10}), (lines, cutsAt) => {
            const text = lines.map(([content, ending]) => content + ending).join("");
            const ends = cutsAt.map((at) => at % (text.length + 1)).sort((a, b) => a - b);
            expect(parseInParts(text, ends).blocks).toEqual(parseMarkdown(text));
        }), {numRuns: 2000, seed: 29});
    });

    it("an answer of paragraphs, lists and code is re-parsed only from its last paragraph", () => {
        const text = "# Plan\n\nFirst *this*.\n\n- one\n- two\n\nThen:\n\n```ts\nconst x = 1;\n\n```\n\nLast words\n";
        const {blocks, tail} = parseInParts(text, Array.from({length: text.length}, (_, index) => index));
        expect(blocks).toEqual(parseMarkdown(text));
        expect(tail).toBe("Last words\n".length);
        // A line still arriving is not read (it may yet become a list item): the tail holds it and the block before.
        expect(parseInParts(text + "- ", []).tail).toBe("Last words\n- ".length);
    });

    it("reads each character once over a stream, even of one endless line", () => {
        const text = "[a](".repeat(25_000);
        const meter = {steps: 0};
        const ends = Array.from({length: 10_000}, (_, index) => index * 10);
        const cuts = startCuts();
        for (const end of ends)
            advanceCuts(cuts, text.slice(0, end), meter);
        expect(meter.steps).toBeLessThanOrEqual(100_000 + 2 * ends.length);
    });
});
