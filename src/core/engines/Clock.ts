/**
 * Time as the model library sees it: the current time and one-shot timers. Injectable, so tests move
 * time by hand (keep-alive, load backoff, the wait for memory) instead of sleeping.
 */
export interface Clock {
    /** Milliseconds since the epoch. */
    now(): number;
    /** Runs `callback` after `ms` (any length: a keep-alive may be weeks); returns what cancels it. Timers never keep the process alive. */
    setTimer(ms: number, callback: () => void): () => void;
}

/**
 * The longest delay setTimeout takes (2^31-1 ms, about 24.8 days): a longer one is set to 1 ms, with a
 * TimeoutOverflowWarning, so a 30-day keep-alive would end at once.
 */
const longestTimeoutMs = 2 ** 31 - 1;

export const systemClock: Clock = {
    now: () => Date.now(),
    setTimer(ms, callback) {
        let timer: NodeJS.Timeout;
        // Longer than setTimeout takes: armed again for what is left, in steps of at most longestTimeoutMs.
        const arm = (left: number) => {
            const step = Math.min(left, longestTimeoutMs);
            timer = setTimeout(() => left > step ? arm(left - step) : callback(), step);
            timer.unref();
        };
        arm(ms);
        return () => clearTimeout(timer);
    }
};
