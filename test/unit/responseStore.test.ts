import { describe, expect, it } from "vitest";
import { ResponseStore } from "../../src/capabilities/chat/responses/ResponseStore.js";
import { StoredItemsJson } from "../../src/capabilities/chat/responses/StoredItemsJson.js";
import { toResponse } from "../../src/capabilities/chat/responses/toResponse.js";

// The store's bounds without a server (test/e2e/responseStore.test.ts has them through HTTP): each key's own share,
// all keys together at most four shares, the key holding the most giving way first.
const response = (id: string, text: string) => toResponse(id, 1, "m", {model: "m", input: "x"}, {status: "completed", usage: null,
    output: [{type: "message", id: `msg_${id}`, status: "completed", role: "assistant", content: [{type: "output_text", text, annotations: [], logprobs: []}]}]});
const put = (store: ResponseStore, owner: string | null, id: string, size: number) =>
    store.put({response: response(id, "x".repeat(size)), input: [{role: "user", content: "q", id: `item_${id}`}], previous: null, owner});

describe("ResponseStore", () => {
    it("gives each key its own share by count and by bytes, evicting that key's oldest", () => {
        const store = new ResponseStore({maxResponses: 3, maxBytes: 10_000});
        expect(put(store, "key-a", "a1", 100)).toBe(true);
        for (let index = 0; index < 5; index++)
            expect(put(store, "key-b", `b${index}`, 100)).toBe(true);
        expect(store.usage("key-b").responses).toBe(3);
        expect(["b0", "b1", "b2", "b3", "b4"].map((id) => store.get(id, "key-b") != null)).toEqual([false, false, true, true, true]);
        for (let index = 5; index < 8; index++)
            put(store, "key-b", `b${index}`, 4_000);
        expect(store.usage("key-b").bytes).toBeLessThanOrEqual(10_000);
        expect(store.get("a1", "key-a")).toBeDefined();
        expect(store.get("a1", "key-b")).toBeUndefined();
    });

    it("refuses what is larger than a share (and everything with a share of 0), leaving what it holds", () => {
        const store = new ResponseStore({maxResponses: 10, maxBytes: 2_000});
        expect(put(store, null, "small", 100)).toBe(true);
        expect(put(store, null, "large", 2_000)).toBe(false);
        expect(store.get("large", null)).toBeUndefined();
        expect(store.get("small", null)).toBeDefined();
        expect(put(new ResponseStore({maxResponses: 10, maxBytes: 0}), null, "any", 1)).toBe(false);
    });

    it("holds at most four shares in all; past that the key holding the most gives way, never the response being stored", () => {
        const store = new ResponseStore({maxResponses: 100, maxBytes: 10_000});
        for (const owner of ["k1", "k2", "k3", "k4"])
            for (let index = 0; index < 3; index++)
                put(store, owner, `${owner}-${index}`, 2_500);
        put(store, "k5", "k5-0", 3_500);
        const usage = ["k1", "k2", "k3", "k4", "k5"].map((owner) => store.usage(owner));
        expect(usage.reduce((sum, {bytes}) => sum + bytes, 0)).toBeLessThanOrEqual(40_000);
        // The small key lost nothing; the one that had to give was one of the four holding the most, its oldest.
        expect(store.get("k5-0", "k5")).toBeDefined();
        expect(store.get("k1-0", "k1")).toBeUndefined();
        expect(usage.map(({responses}) => responses)).toEqual([2, 3, 3, 3, 1]);
        // A new key's first response, as large as a share, is stored even when every other key is full.
        expect(put(store, "k6", "k6-0", 9_000)).toBe(true);
        expect(store.get("k6-0", "k6")).toBeDefined();
    });

    it("counts the conversation a response continues, and writes input_items from the stored JSON", async () => {
        const store = new ResponseStore({maxResponses: 10, maxBytes: 6_000});
        expect(put(store, null, "r1", 2_000)).toBe(true);
        const first = store.get("r1", null)!;
        const input = [{role: "user" as const, content: "one", id: "i1"}, {role: "user" as const, content: "two", id: "i2"}];
        expect(store.put({response: response("r2", "y".repeat(2_000)), input, previous: first, owner: null})).toBe(true);
        const second = store.get("r2", null)!;
        expect(second.bytes).toBeGreaterThan(first.bytes + 2_000);
        expect(ResponseStore.conversationOf(second).map((item) => "content" in item ? item.content : null)).toEqual(
            ["q", [{type: "output_text", text: "x".repeat(2_000), annotations: [], logprobs: []}], "one", "two", [{type: "output_text", text: "y".repeat(2_000), annotations: [], logprobs: []}]]);
        expect(store.put({response: response("r3", "z".repeat(1_000)), input: [], previous: second, owner: null})).toBe(false);
        const {body, length} = ResponseStore.inputItemsBody(second, false);
        const bytes = Buffer.concat(await body.toArray());
        expect(bytes.length).toBe(length);
        expect(JSON.parse(bytes.toString())).toEqual({object: "list", data: [...input].reverse(), first_id: "i2", last_id: "i1", has_more: false});
        expect(JSON.parse(Buffer.concat(await ResponseStore.inputItemsBody(second, true).body.toArray()).toString()).data).toEqual(input);
        expect(JSON.parse(second.json.toString())).toEqual(response("r2", "y".repeat(2_000)));
    });

    it("writes stored items oldest or newest first as JSON.stringify would, in pieces of about 256 KB, large items uncopied", () => {
        const items = [
            {id: "a", content: "é ✓ 😀 \u2028 \"quoted\""}, {id: "b", content: "x".repeat(1_500_000)},
            ...Array.from({length: 3000}, (_, index) => ({id: `s${index}`, content: "y".repeat(500) + "ü"})), {id: "c", content: "z".repeat(2_000_000)}, {id: "d", content: ""}
        ];
        const stored = StoredItemsJson.of(items);
        const oldestFirst = [...stored.joined(true)];
        expect(Buffer.concat(oldestFirst).toString()).toBe(JSON.stringify(items).slice(1, -1));
        // In order: views of the stored buffer, none over 256 KB.
        expect(oldestFirst.every((piece) => piece.buffer === stored.bytes.buffer && piece.length <= 256 * 1024)).toBe(true);
        const newestFirst = [...stored.joined(false)];
        expect(Buffer.concat(newestFirst).toString()).toBe(JSON.stringify([...items].reverse()).slice(1, -1));
        // Reversed: the 2 MB and 1.5 MB items are views of the stored buffer, not copies; no piece is much over 256 KB.
        const views = newestFirst.filter((piece) => piece.buffer === stored.bytes.buffer);
        expect(views.reduce((sum, piece) => sum + piece.length, 0)).toBeGreaterThanOrEqual(3_500_000);
        expect(Math.max(...newestFirst.map((piece) => piece.length))).toBeLessThan(256 * 1024 + 1024);
    });
});
