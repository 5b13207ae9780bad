import { describe, expect, it } from "vitest";
import { DecodeStepBarrier } from "../../src/capabilities/chat/llama/DecodeStepBarrier.js";

const settled = async (promise: Promise<void>) => {
    let done = false;
    void promise.then(() => done = true);
    await new Promise((resolve) => setImmediate(resolve));
    return done;
};

describe("DecodeStepBarrier", () => {
    it("a lone participant never waits", async () => {
        const barrier = new DecodeStepBarrier();
        barrier.join();
        expect(await settled(barrier.arrive())).toBe(true);
    });

    it("releases everyone only when the last participant arrives", async () => {
        const barrier = new DecodeStepBarrier();
        barrier.join();
        barrier.join();
        barrier.join();
        const first = barrier.arrive();
        const second = barrier.arrive();
        expect(await settled(first)).toBe(false);
        expect(await settled(second)).toBe(false);
        const third = barrier.arrive();
        expect(await settled(first)).toBe(true);
        expect(await settled(second)).toBe(true);
        expect(await settled(third)).toBe(true);
    });

    it("a participant that leaves releases the ones waiting for it", async () => {
        const barrier = new DecodeStepBarrier();
        barrier.join();
        barrier.join();
        const waiting = barrier.arrive();
        expect(await settled(waiting)).toBe(false);
        barrier.leave();
        expect(await settled(waiting)).toBe(true);
    });

    it("a newcomer joins the next step, and rounds repeat", async () => {
        const barrier = new DecodeStepBarrier();
        barrier.join();
        const alone = barrier.arrive();
        expect(await settled(alone)).toBe(true);
        barrier.join();
        const a = barrier.arrive();
        expect(await settled(a)).toBe(false);
        const b = barrier.arrive();
        expect(await settled(a)).toBe(true);
        expect(await settled(b)).toBe(true);
        const c = barrier.arrive();
        expect(await settled(c)).toBe(false);
        barrier.leave();
        expect(await settled(c)).toBe(true);
    });
});
