/**
 * Time as the model library sees it: the current time and one-shot timers. Injectable, so tests move
 * time by hand (keep-alive, load backoff, the wait for memory) instead of sleeping.
 */
export interface Clock {
    /** Milliseconds since the epoch. */
    now(): number;
    /** Runs `callback` after `ms`; returns what cancels it. Timers never keep the process alive. */
    setTimer(ms: number, callback: () => void): () => void;
}

export const systemClock: Clock = {
    now: () => Date.now(),
    setTimer(ms, callback) {
        const timer = setTimeout(callback, ms);
        timer.unref();
        return () => clearTimeout(timer);
    }
};
