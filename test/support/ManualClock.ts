import type { Clock } from "../../src/core/engines/Clock.js";

/**
 * A clock that moves only when a test says so (`advance`): the model library's keep-alive, load backoff
 * and wait for memory become steps of the test, never a sleep.
 */
export class ManualClock implements Clock {
    private time = Date.UTC(2026, 0, 1);
    private readonly timers = new Set<{at: number, callback: () => void}>();
    private readonly timerWaiters: (() => void)[] = [];

    now() {
        return this.time;
    }

    setTimer(ms: number, callback: () => void) {
        const timer = {at: this.time + ms, callback};
        this.timers.add(timer);
        for (const wake of this.timerWaiters.splice(0))
            wake();
        return () => void this.timers.delete(timer);
    }

    /** Timers set and not yet fired or cancelled. */
    get pending() {
        return this.timers.size;
    }

    /** Resolves once at least `count` timers are pending (the server reached the wait it sets a timer for). */
    async timersPending(count: number) {
        while (this.timers.size < count)
            await new Promise<void>((resolve) => this.timerWaiters.push(resolve));
    }

    /** Moves time on by `ms`, firing the timers due, in order (a timer they set is fired too when due). */
    advance(ms: number) {
        const until = this.time + ms;
        for (;;) {
            const due = [...this.timers].filter((timer) => timer.at <= until).sort((a, b) => a.at - b.at)[0];
            if (due == null)
                break;
            this.timers.delete(due);
            this.time = Math.max(this.time, due.at);
            due.callback();
        }
        this.time = until;
    }
}
