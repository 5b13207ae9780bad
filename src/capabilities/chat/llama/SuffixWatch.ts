import { findPiece, withoutSpace } from "./parameterMarkup.js";

/**
 * Where a call's suffix ends its arguments as they grow piece by piece, matched with any whitespace between its tags
 * (findPiece's flexible match). A match ends with the suffix's last character that is not whitespace, so text that
 * brings none cannot complete one: it is not searched. A search goes from the earliest place a match may still start:
 * a match starts with the suffix's first character that is not whitespace, and those from there on are the suffix's
 * own, so after a search that found none, only the last N of them (N: the suffix's count) can still begin one. Only new
 * text is looked at: a long run of whitespace, or of the suffix's characters (a JSON argument's `}` and the line breaks
 * after it, Hermes-style), streamed in pieces is not walked again on every piece.
 */
export class SuffixWatch {
    private readonly pattern: string;
    /** Where the last (at most N) characters that are not whitespace are. */
    private positions: number[] = [];
    private seen = 0;
    /** The earliest place the suffix may begin (the text's length: nowhere yet). */
    start = 0;

    /** Set when a match found is not the call's end: the next find searches again from past it. */
    private again = false;

    constructor(private readonly suffix: string) {
        this.pattern = withoutSpace(suffix);
    }

    reset() {
        this.positions = [];
        this.seen = this.start = 0;
        this.again = false;
    }

    /** What was found up to `at` is not the suffix (text of a value that reads like it): search again from `at`. */
    skip(at: number) {
        this.start = at;
        this.positions = this.positions.filter((position) => position >= at);
        this.again = true;
    }

    /** The suffix in `text` from `from` on (what comes before is not the suffix's), or null: not yet. */
    find(text: string, from: number): {start: number, end: number} | null {
        this.start = Math.max(this.start, from);
        let brought = false;
        for (this.seen = Math.max(this.seen, from); this.seen < text.length; this.seen++)
            if (!/\s/.test(text[this.seen])) {
                brought = true;
                this.positions.push(this.seen);
                if (this.positions.length > this.pattern.length)
                    this.positions.shift();
            }
        if (!brought && !this.again)
            return null;
        this.again = false;
        const found = findPiece(text, this.suffix, this.start, true);
        if (found != null)
            return found;
        this.start = text.length;
        for (let index = 0; index < this.positions.length; index++)
            if (this.positions[index] >= from && this.pattern.startsWith(this.positions.slice(index).map((at) => text[at]).join(""))) {
                this.start = this.positions[index];
                break;
            }
        return null;
    }
}
