import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { StopSequenceFilter } from "../../src/capabilities/chat/shared/StopSequenceFilter.js";

/** Feeds `pieces` one push at a time and returns every returned piece (flush included when asked). */
function feed(filter: StopSequenceFilter, pieces: readonly string[], flush = true) {
    const out = pieces.map((piece) => filter.push(piece));
    if (flush)
        out.push(filter.flush());
    return out;
}

/** Splits a string into single code points (an emoji stays whole). */
const codePoints = (text: string) => [...text];
/** Splits a string into single UTF-16 code units (an emoji is cut in half). */
const codeUnits = (text: string) => text.split("");

describe("StopSequenceFilter", () => {
    it("cuts at a stop found inside one push and drops the stop and what follows", () => {
        const filter = new StopSequenceFilter(["STOP"]);
        expect(filter.push("hello STOP world")).toBe("hello ");
        expect(filter.hasStopped).toBe(true);
        expect(filter.flush()).toBe("");
    });

    it("finds a stop split across single-character pushes and never emits any part of it", () => {
        const stop = "<END>";
        const before = "Some text with < and <E but no end yet, then ";
        const text = before + stop + " trailing text";
        const filter = new StopSequenceFilter([stop]);

        const out = feed(filter, codePoints(text));

        expect(out.join("")).toBe(before);
        expect(filter.hasStopped).toBe(true);
        // The stop starts right after `before`: no piece may leak its first characters.
        let emitted = "";
        for (const piece of out) {
            emitted += piece;
            expect(emitted.length).toBeLessThanOrEqual(before.length);
        }
    });

    it("emits text as soon as it cannot be the start of a stop", () => {
        const filter = new StopSequenceFilter(["###"]);
        expect(filter.push("a")).toBe("a");
        expect(filter.push("b#")).toBe("b");
        expect(filter.push("#")).toBe("");
        expect(filter.push("x")).toBe("##x");
        expect(filter.hasStopped).toBe(false);
    });

    it("cuts at the earliest occurrence when several stops are present", () => {
        const filter = new StopSequenceFilter(["zzz", "yy", "x"]);
        expect(filter.push("abc yy def x ghi zzz")).toBe("abc ");
        expect(filter.hasStopped).toBe(true);
    });

    it("the earliest stop wins even when it is listed last and arrives over several pushes", () => {
        const filter = new StopSequenceFilter(["later", "soon"]);
        const out = feed(filter, ["it will be so", "on and later"]);
        expect(out.join("")).toBe("it will be ");
    });

    it("handles overlapping stops 'ab' and 'b'", () => {
        // "ab" starts before "b" inside it.
        expect(feed(new StopSequenceFilter(["ab", "b"]), ["xab"]).join("")).toBe("x");
        // Char by char: "a" is held as a possible "ab", then "ab" is complete.
        expect(feed(new StopSequenceFilter(["ab", "b"]), ["x", "a", "b", "c"]).join("")).toBe("x");
        // A lone "b" stops as well.
        expect(feed(new StopSequenceFilter(["ab", "b"]), ["x", "c", "b", "a"]).join("")).toBe("xc");
        // Order of the stops does not matter.
        expect(feed(new StopSequenceFilter(["b", "ab"]), ["x", "a", "b"]).join("")).toBe("x");
    });

    it("releases a held-back prefix on a later push once it turns out not to be a stop", () => {
        const filter = new StopSequenceFilter(["\nUser:"]);
        expect(filter.push("Hi\nUs")).toBe("Hi");
        expect(filter.push("ually")).toBe("\nUsually");
        expect(filter.hasStopped).toBe(false);
        expect(filter.flush()).toBe("");
    });

    it("releases a held-back prefix on flush() when generation ends", () => {
        const filter = new StopSequenceFilter(["\nUser:"]);
        expect(filter.push("Bye\nUse")).toBe("Bye");
        expect(filter.flush()).toBe("\nUse");
        expect(filter.hasStopped).toBe(false);
    });

    it("re-checks a shorter prefix when the longer held prefix breaks", () => {
        // "aab" with stop "aab": after "aa" a third "a" breaks "aa" but "aa" (the last two) still may start it.
        const filter = new StopSequenceFilter(["aab"]);
        const out = feed(filter, ["a", "a", "a", "b", "c"]);
        expect(out.join("")).toBe("a");
        expect(filter.hasStopped).toBe(true);
    });

    it("passes everything through unchanged without stops", () => {
        const filter = new StopSequenceFilter([]);
        expect(filter.push("any")).toBe("any");
        expect(filter.push(" text\n")).toBe(" text\n");
        expect(filter.hasStopped).toBe(false);
        expect(filter.flush()).toBe("");
    });

    it("returns nothing after it stopped, from push or flush", () => {
        const filter = new StopSequenceFilter(["."]);
        expect(filter.push("One. Two")).toBe("One");
        expect(filter.push(" three")).toBe("");
        expect(filter.push("")).toBe("");
        expect(filter.flush()).toBe("");
        expect(filter.hasStopped).toBe(true);
    });

    it("a stop at the very start yields no text at all", () => {
        const filter = new StopSequenceFilter(["</s>"]);
        expect(feed(filter, codePoints("</s>after")).join("")).toBe("");
        expect(filter.hasStopped).toBe(true);
    });

    it("matches an emoji stop pushed whole, code point by code point, or half an emoji at a time", () => {
        const stop = "🛑!";
        const text = "go 🚦 go 🛑! never";
        for (const pieces of [[text], codePoints(text), codeUnits(text)]) {
            const filter = new StopSequenceFilter([stop]);
            const out = feed(filter, pieces);
            expect(out.join("")).toBe("go 🚦 go ");
            expect(filter.hasStopped).toBe(true);
        }
    });

    it("releases an emoji that shares its first UTF-16 unit with the stop but is not it", () => {
        // 😀 and 🛑 both start with the surrogate \uD83D.
        const filter = new StopSequenceFilter(["🛑"]);
        const out = feed(filter, codeUnits("a😀b"));
        expect(out.join("")).toBe("a😀b");
        expect(filter.hasStopped).toBe(false);
        // No piece contains half an emoji on its own.
        expect(out.filter((piece) => piece !== "")).toEqual(["a", "😀", "b"]);
    });

    it("a held-back emoji prefix of a multi-emoji stop is released by flush()", () => {
        const filter = new StopSequenceFilter(["👋🌍"]);
        expect(filter.push("bye 👋")).toBe("bye ");
        expect(filter.flush()).toBe("👋");
    });

    it("holds back exactly what a naive filter holds back, for any text, pieces and stops (self-overlapping ones included)", () => {
        // The reference: try every suffix of the pending text, longest first (the filter's old algorithm).
        const naiveHeld = (pending: string, stops: string[]) => {
            for (let length = Math.min(Math.max(...stops.map((stop) => stop.length)) - 1, pending.length); length > 0; length--)
                if (stops.some((stop) => stop.startsWith(pending.slice(pending.length - length))))
                    return length;
            return 0;
        };
        const text = fc.string({unit: fc.constantFrom("a", "b", "c"), maxLength: 40});
        fc.assert(fc.property(fc.array(text, {maxLength: 12}), fc.array(fc.string({unit: fc.constantFrom("a", "b", "c"), minLength: 1, maxLength: 8}), {minLength: 1, maxLength: 3}), (pieces, stops) => {
            const filter = new StopSequenceFilter(stops);
            let emitted = "";
            let sent = "";
            for (const piece of pieces) {
                emitted += filter.push(piece);
                sent += piece;
                if (filter.hasStopped)
                    break;
                // Nothing stopped yet: everything sent is emitted or held, and what is held is the naive hold.
                expect(sent.slice(0, emitted.length)).toBe(emitted);
                expect(sent.length - emitted.length).toBe(naiveHeld(sent, stops));
            }
            if (!filter.hasStopped)
                expect(emitted + filter.flush()).toBe(sent);
        }), {seed: 20261127, numRuns: 2000});
    });

    it("keeps up with a long stop sequence that the text keeps almost matching", () => {
        // 'aaaa...ab' with a text of only 'a's: every push holds everything; the stop is 4,096 characters (the schema's bound).
        const stop = "a".repeat(4095) + "b";
        const filter = new StopSequenceFilter([stop]);
        let emitted = "";
        for (let index = 0; index < 6000; index++)
            emitted += filter.push("a");
        expect(emitted).toBe("a".repeat(6000 - 4095));
        expect(filter.push("b")).toBe("");
        expect(filter.matched).toBe(stop);
    });

    it("text passed unsearched goes out with what was held before it, and is never searched", () => {
        const filter = new StopSequenceFilter(["abc"]);
        expect(filter.push("xab")).toBe("x");
        expect(filter.pass("abc")).toBe("ababc");
        expect(filter.hasStopped).toBe(false);
        expect(filter.push("ab")).toBe("");
        expect(filter.push("c")).toBe("");
        expect(filter.hasStopped).toBe(true);
        expect(filter.pass("more")).toBe("");
    });

    it("held text waits unsearched; then only the answer's tail of it and what follows is searched", () => {
        const filter = new StopSequenceFilter(["<b", "think"]);
        filter.hold("</think>\n");
        // The answer is the last 3 characters: the markup before them goes out unsearched.
        expect(filter.tail("<b>", 3)).toBe("</think>\n");
        expect(filter.hasStopped).toBe(true);
        expect(filter.matched).toBe("<b");
        const later = new StopSequenceFilter(["<b"]);
        later.hold("<");
        expect(later.tail("b>", 3)).toBe("");
        expect(later.hasStopped).toBe(true);
    });

    it("without stop sequences, held text goes out in its place (it went to the end of the answer: found by review)", () => {
        const filter = new StopSequenceFilter([]);
        expect(filter.push("a")).toBe("a");
        filter.hold("<");
        expect(filter.push("b")).toBe("<b");
        expect(filter.flush()).toBe("");
    });
});

