import { EventEmitter } from "node:events";
import type { Context } from "koa";
import { describe, expect, it } from "vitest";
import { drained } from "../../src/core/streaming/ResponseWriter.js";

/** A response whose socket buffer is full until it emits 'drain' (or closes). */
function fullResponse() {
    const res = Object.assign(new EventEmitter(), {writableNeedDrain: true, destroyed: false});
    return {res, ctx: {res} as unknown as Context};
}

describe("drained: writers waiting for one response's 'drain'", () => {
    it("share one wait (one listener pair, however many wait), all released by the drain, and a later wait starts anew", async () => {
        const {res, ctx} = fullResponse();
        const waits = Array.from({length: 20}, () => drained(ctx));
        expect(res.listenerCount("close")).toBe(1);
        expect(res.listenerCount("drain")).toBe(1);
        res.emit("drain");
        await Promise.all(waits);
        expect(res.listenerCount("close") + res.listenerCount("drain")).toBe(0);
        const next = drained(ctx);
        expect(res.listenerCount("drain")).toBe(1);
        res.emit("close");
        await next;
        expect(res.listenerCount("close") + res.listenerCount("drain")).toBe(0);
    });

    it("does not wait when the buffer has room or the connection is gone", async () => {
        const {res, ctx} = fullResponse();
        res.writableNeedDrain = false;
        await drained(ctx);
        res.writableNeedDrain = true;
        res.destroyed = true;
        await drained(ctx);
        expect(res.listenerCount("close")).toBe(0);
    });
});
