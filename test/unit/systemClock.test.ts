import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { systemClock } from "../../src/core/engines/Clock.js";

/**
 * The library's real timers (keep-alive, load backoff, the wait for memory) on Node's: setTimeout turns a delay past
 * 2^31-1 ms (24.8 days) into 1 ms, so a 720-hour keep-alive ended as soon as the request did. Vitest's fake timers
 * overflow the same way, so time is moved by hand here.
 */
const day = 86_400_000;

beforeEach(() => {
    vi.useFakeTimers();
});
afterEach(() => {
    vi.useRealTimers();
});

describe("systemClock.setTimer", () => {
    it("a timer longer than setTimeout takes fires at its end, not at once", () => {
        const fired: number[] = [];
        const started = Date.now();
        systemClock.setTimer(30 * day, () => fired.push(Date.now() - started));
        vi.advanceTimersByTime(1000);
        expect(fired).toEqual([]);
        vi.advanceTimersByTime(25 * day);
        expect(fired).toEqual([]);
        vi.advanceTimersByTime(5 * day - 1001);
        expect(fired).toEqual([]);
        vi.advanceTimersByTime(1);
        expect(fired).toEqual([30 * day]);
    });

    it("cancels a long timer in any of its steps; a short timer is one setTimeout, as before", () => {
        const fired: string[] = [];
        const cancel = systemClock.setTimer(60 * day, () => fired.push("long"));
        vi.advanceTimersByTime(30 * day);
        cancel();
        vi.advanceTimersByTime(60 * day);
        systemClock.setTimer(5000, () => fired.push("short"));
        expect(vi.getTimerCount()).toBe(1);
        vi.advanceTimersByTime(5000);
        expect(fired).toEqual(["short"]);
    });
});
