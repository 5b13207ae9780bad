/**
 * Streams generated text while cutting it at the first stop sequence. Text that might be the start
 * of a stop sequence is held back until it is known not to be, so a client never sees a partial
 * stop sequence, and the stop sequence itself is never part of the output.
 */
export class StopSequenceFilter {
    private pending = "";
    private stopped = false;
    /** The stop sequence that ended the text, once one has. */
    matched: string | null = null;
    private readonly longest: number;

    constructor(private readonly stops: readonly string[]) {
        this.longest = Math.max(0, ...stops.map((stop) => stop.length));
    }

    get hasStopped() {
        return this.stopped;
    }

    /** Returns the text that is now safe to emit. */
    push(text: string): string {
        if (this.stopped)
            return "";
        if (this.stops.length === 0)
            return text;

        this.pending += text;
        let cut = -1;
        for (const stop of this.stops) {
            const at = this.pending.indexOf(stop);
            if (at !== -1 && (cut === -1 || at < cut)) {
                cut = at;
                this.matched = stop;
            }
        }
        if (cut !== -1) {
            this.stopped = true;
            const safe = this.pending.slice(0, cut);
            this.pending = "";
            return safe;
        }

        const hold = this.heldSuffixLength();
        const safe = this.pending.slice(0, this.pending.length - hold);
        this.pending = this.pending.slice(this.pending.length - hold);
        return safe;
    }

    /** At the end of generation whatever was held back is plain text after all. */
    flush(): string {
        const rest = this.stopped ? "" : this.pending;
        this.pending = "";
        return rest;
    }

    /** Length of the longest suffix of `pending` that is a proper prefix of some stop sequence. */
    private heldSuffixLength() {
        const maxHold = Math.min(this.longest - 1, this.pending.length);
        for (let length = maxHold; length > 0; length--) {
            const suffix = this.pending.slice(this.pending.length - length);
            if (this.stops.some((stop) => stop.startsWith(suffix)))
                return length;
        }
        return 0;
    }
}
