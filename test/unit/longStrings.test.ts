import { describe, expect, it } from "vitest";
import { longStringChars, putLongStrings, takeLongStrings } from "../../src/core/http/longStrings.js";
import { parseJsonOffThread } from "../../src/core/http/parseJsonOffThread.js";
import { joinPieces, ownedPieces } from "../../src/core/workers/ownedPieces.js";

const long = (chars: number, unit = "ab") => unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);

describe("long strings cross between threads in pieces", () => {
    it("takes every long string out of a value (in objects and arrays, at any depth) and puts it back the same", () => {
        const value = {
            model: "m", short: long(longStringChars - 1),
            messages: [{role: "user", content: long(longStringChars)}, {role: "assistant", content: [{text: long(2 * longStringChars + 5)}]}],
            [long(longStringChars, "k")]: 1
        };
        const original = structuredClone(value);
        const {strings, pieces} = takeLongStrings(value);
        expect(strings).toEqual([
            {path: ["messages", 1, "content", 0, "text"], pieces: 3},
            {path: ["messages", 0, "content"], pieces: 1}
        ]);
        expect(pieces.map((piece) => piece.length)).toEqual([longStringChars, longStringChars, 5, longStringChars]);
        expect(value.messages[0].content).toBe("");
        // A key is not a value: it stays (the body's hazard check bounds keys apart).
        expect(value.short).toBe(original.short);
        putLongStrings(value, strings, pieces);
        expect(value).toEqual(original);
    });

    it("parses a body off the main thread and gives it back whole: long strings (a surrogate pair cut between two pieces) and the rest", async () => {
        // "😀" is two UTF-16 units: a piece boundary falls inside one of them.
        const emoji = "x" + long(longStringChars + 10, "😀");
        const body = {messages: [{role: "user", content: emoji}, {role: "user", content: long(3 * longStringChars)}], n: 1, nested: {deep: [long(10)]}};
        const bytes = new TextEncoder().encode(JSON.stringify(body));
        // In the pieces a socket gives, each in a buffer of its own.
        const chunks = [0, 1, 2, 3].map((index) => bytes.slice(index * Math.ceil(bytes.length / 4), (index + 1) * Math.ceil(bytes.length / 4)));
        const reply = await parseJsonOffThread(chunks, {maxDepth: 128, maxValues: 1000});
        expect(reply).toEqual({value: body});
        // Moved, not copied: the caller's chunks are detached.
        expect(chunks.every((chunk) => chunk.byteLength === 0)).toBe(true);
    });

    it("parses a long JSON string as it is, and refuses a body past its bounds there", async () => {
        expect(await parseJsonOffThread(JSON.stringify({query: long(longStringChars + 1)}), {maxDepth: 128, maxValues: 10})).toEqual({value: {query: long(longStringChars + 1)}});
        const reply = await parseJsonOffThread(JSON.stringify({list: Array(20).fill(long(longStringChars))}), {maxDepth: 128, maxValues: 10});
        expect(reply).toMatchObject({hazard: {problem: "too_many_values"}});
        await expect(parseJsonOffThread("{not json", {maxDepth: 128, maxValues: 10})).rejects.toThrow(SyntaxError);
    });
});

describe("ownedPieces", () => {
    it("moves a piece that spans its buffer as it is, copies a view into a larger buffer, and lists each buffer once", () => {
        const whole = new Uint8Array([1, 2, 3]);
        const shared = new Uint8Array([4, 5, 6, 7]);
        const {pieces, transfer} = ownedPieces([whole, shared.subarray(1, 3), whole]);
        expect(pieces[0]).toBe(whole);
        expect(pieces[1]).not.toBe(shared.subarray(1, 3));
        expect([...pieces[1]]).toEqual([5, 6]);
        expect(pieces[1].buffer).not.toBe(shared.buffer);
        expect(transfer).toEqual([whole.buffer, pieces[1].buffer]);
        expect([...joinPieces(pieces)]).toEqual([1, 2, 3, 5, 6, 1, 2, 3]);
        expect(joinPieces([whole]).buffer).toBe(whole.buffer);
    });
});
