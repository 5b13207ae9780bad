import { describe, expect, it } from "vitest";
import { parseJsonOffThread } from "../../src/core/http/parseJsonOffThread.js";
import { movedStringLength, putLongStrings, takeLongStrings } from "../../src/core/workers/movedStrings.js";
import { joinPieces, ownedPieces } from "../../src/core/workers/ownedPieces.js";

const long = (chars: number, unit = "ab") => unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);

const longStringChars = 256 * 1024;

describe("parseJsonOffThread", () => {
    it("parses a body from the chunks it arrived in, moved to the parse thread (not joined on the main thread), and gives it back whole", async () => {
        // "😀" is two UTF-16 units and four UTF-8 bytes: chunk boundaries fall inside some of them.
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

    it("parses JSON text as it is, and refuses a body past its bounds there", async () => {
        expect(await parseJsonOffThread(JSON.stringify({query: long(longStringChars + 1)}), {maxDepth: 128, maxValues: 10})).toEqual({value: {query: long(longStringChars + 1)}});
        const reply = await parseJsonOffThread(JSON.stringify({list: Array(20).fill(long(10))}), {maxDepth: 128, maxValues: 10});
        expect(reply).toMatchObject({hazard: {problem: "too_many_values"}});
        await expect(parseJsonOffThread("{not json", {maxDepth: 128, maxValues: 10})).rejects.toThrow(SyntaxError);
    });
});

describe("a route's bound on a top-level field's items", () => {
    it("refuses a body whose field holds more items than the route allows in the parse thread: the hazard comes back, not the value", async () => {
        const messages = Array.from({length: 32_000}, () => ({role: "user", content: ""}));
        const bounds = {maxDepth: 128, maxValues: 100_000, maxItems: {messages: 10_000, input: 10_000}};
        expect(await parseJsonOffThread(JSON.stringify({model: "m", messages}), bounds))
            .toEqual({hazard: {path: ["messages"], problem: "too_many_items", limit: 10_000, length: 32_000}});
        // At the bound, a string where an array may be, and a field the route does not bound: the value.
        const within = {messages: messages.slice(0, 10_000), input: "x".repeat(20_000), other: Array(20_000).fill(0)};
        expect(await parseJsonOffThread(JSON.stringify(within), bounds)).toEqual({value: within});
    });
});

describe("long strings moved as bytes", () => {
    // Latin-1 beyond ASCII, UTF-16 beyond Latin-1 (an emoji's surrogate pair, and a lone surrogate JSON may hold).
    const latin1 = "é" + long(movedStringLength);
    const utf16 = long(movedStringLength, "😀") + "\ud800";

    it("takes each long string out of a value by its path, as latin1 or utf16le bytes, and puts it back whole", () => {
        const value = {messages: [{role: "user", content: latin1}, {role: "user", content: "short"}], tools: [[utf16]], n: 1};
        const expected = structuredClone(value);
        const taken = takeLongStrings(value);
        expect(taken.strings.map(({path, encoding}) => ({path, encoding}))).toEqual(expect.arrayContaining([
            {path: ["messages", 0, "content"], encoding: "latin1"}, {path: ["tools", 0, 0], encoding: "utf16le"}]));
        expect(taken.strings).toHaveLength(2);
        expect(taken.transfer).toEqual(taken.strings.map(({bytes}) => bytes));
        expect(value.messages[0].content).toBe("");
        expect(putLongStrings(structuredClone(taken.value), taken.strings)).toEqual(expected);
    });

    it("moves a root that is itself a long string, and leaves a value without long strings as it is", () => {
        const root = takeLongStrings(utf16);
        expect(root.value).toBe("");
        expect(putLongStrings(root.value, root.strings)).toBe(utf16);
        const small = {a: [long(movedStringLength - 1)]};
        expect(takeLongStrings(small)).toEqual({value: small, strings: [], transfer: []});
    });

    it("gives a body's long strings back from the parse thread exactly as JSON.parse reads them", async () => {
        const body = {messages: [{role: "user", content: latin1}], input: [{type: "function_call", arguments: utf16}]};
        expect(await parseJsonOffThread(JSON.stringify(body), {maxDepth: 128, maxValues: 1000})).toEqual({value: body});
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

describe("a route's bound on the values a top-level field holds", () => {
    it("refuses in the parse thread a field past it, naming the array that crossed it; other fields and a field within it pass", async () => {
        const schema = {type: "object", properties: {pick: {type: "string", enum: Array.from({length: 40_000}, (_, index) => `value-${index}`)}}};
        const bounds = {maxDepth: 128, maxValues: 100_000, maxFieldValues: {response_format: 32_768}};
        expect(await parseJsonOffThread(JSON.stringify({model: "m", response_format: {type: "json_schema", json_schema: {name: "pick", schema}}}), bounds)).toEqual({hazard: {
            problem: "field_too_large", field: "response_format", limit: 32_768, path: ["response_format", "json_schema", "schema", "properties", "pick", "enum"]
        }});
        const elsewhere = {model: "m", metadata: {list: schema.properties.pick.enum}};
        expect(await parseJsonOffThread(JSON.stringify(elsewhere), bounds)).toEqual({value: elsewhere});
        const within = {model: "m", response_format: {list: schema.properties.pick.enum.slice(0, 30_000)}};
        expect(await parseJsonOffThread(JSON.stringify(within), bounds)).toEqual({value: within});
    });
});
