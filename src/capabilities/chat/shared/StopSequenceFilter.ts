/**
 * What of a piece of text is searched for stop sequences (StopSequenceFilter.take): all of it with what was held
 * (`search`); none, what was held going out too (`pass`: a thinking model's reasoning and markup); none yet (`hold`: it
 * may turn out to be the answer's); the last `tail` characters of what was held and it (the answer begins there).
 */
export type StopSearch = "search" | "pass" | "hold" | {tail: number};

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
            return this.pass(text);

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

    /**
     * Text where no stop sequence is searched (a thinking model's reasoning: the search is the answer's), as it is:
     * with what was held back before it, which can no longer begin a stop sequence.
     */
    pass(text: string): string {
        if (this.stopped)
            return "";
        const out = this.pending + text;
        this.pending = "";
        return out;
    }

    /** Text not known yet to be answer or not: held back, unsearched, until what follows says (push, pass or tail). */
    hold(text: string): void {
        if (!this.stopped)
            this.pending += text;
    }

    /** What was held and `text`, of which only the last `answer` characters are searched (the answer begins there). */
    tail(text: string, answer: number): string {
        if (this.stopped)
            return "";
        const all = this.pending + text;
        const split = Math.max(0, all.length - answer);
        this.pending = "";
        return all.slice(0, split) + this.push(all.slice(split));
    }

    /** The text that is now safe to emit, `text` searched as `search` says. */
    take(text: string, search: StopSearch): string {
        if (search === "hold") {
            this.hold(text);
            return "";
        }
        return search === "search" ? this.push(text) : search === "pass" ? this.pass(text) : this.tail(text, search.tail);
    }

    /** At the end of generation whatever was held back is plain text after all. */
    flush(): string {
        const rest = this.stopped ? "" : this.pending;
        this.pending = "";
        return rest;
    }

    /**
     * Length of the longest suffix of `pending` that is a proper prefix of some stop sequence: per stop, the prefix
     * function (Knuth-Morris-Pratt) of the stop followed by the last characters of `pending`, linear in the stop's
     * length (trying each suffix in turn was quadratic, per generated token).
     */
    private heldSuffixLength() {
        let held = 0;
        for (const stop of this.stops)
            held = Math.max(held, longestSuffixPrefix(this.pending, stop));
        return held;
    }
}

/** The longest proper prefix of `stop` that `text` ends with. */
function longestSuffixPrefix(text: string, stop: string): number {
    const tail = text.slice(Math.max(0, text.length - (stop.length - 1)));
    if (tail.length === 0)
        return 0;
    // The prefix function of `stop`, then the match length carried along `tail`.
    const prefix = new Int32Array(stop.length);
    for (let index = 1, length = 0; index < stop.length; index++) {
        while (length > 0 && stop[index] !== stop[length])
            length = prefix[length - 1];
        if (stop[index] === stop[length])
            length++;
        prefix[index] = length;
    }
    let matched = 0;
    // UTF-16 code units, as `length` and `slice` count (a held half of a surrogate pair is held like any other).
    for (let index = 0; index < tail.length; index++) {
        const char = tail[index];
        while (matched > 0 && (matched === stop.length || char !== stop[matched]))
            matched = prefix[matched - 1];
        if (char === stop[matched])
            matched++;
    }
    return matched === stop.length ? prefix[matched - 1] : matched;
}
