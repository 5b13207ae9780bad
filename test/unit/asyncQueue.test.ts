import { describe, expect, it } from "vitest";
import { AsyncQueue } from "../../src/core/streaming/AsyncQueue.js";

describe("AsyncQueue", () => {
    it("hands items over in order, to a waiting consumer or a later one, then null after end()", async () => {
        const queue = new AsyncQueue<number>();
        const waiting = queue.next();
        queue.push(1);
        queue.push(2);
        queue.push(3);
        queue.end();
        queue.push(4);
        expect(await waiting).toBe(1);
        expect([await queue.next(), await queue.next(), await queue.next(), await queue.next()]).toEqual([2, 3, null, null]);
    });

    it("rejects with the failure only once the items queued before it are taken, and ignores what comes after", async () => {
        const queue = new AsyncQueue<string>();
        queue.push("a");
        queue.fail(new Error("engine failed"));
        queue.push("b");
        queue.end();
        expect(await queue.next()).toBe("a");
        await expect(queue.next()).rejects.toThrow("engine failed");
        await expect(queue.next()).rejects.toThrow("engine failed");
    });

    it("wakes a waiting consumer with the failure", async () => {
        const queue = new AsyncQueue<string>();
        const waiting = queue.next();
        queue.fail(new RangeError("cancelled"));
        await expect(waiting).rejects.toThrow(RangeError);
    });
});
