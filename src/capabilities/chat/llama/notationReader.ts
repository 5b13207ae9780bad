/** Thrown where a call's arguments are not in the notation a reader reads: the call is not a call. */
export class NotNotation extends Error {}

/** How deep maps and lists may nest in an argument (deeper is not read as a call, nor does it exhaust the stack). */
const maxDepth = 64;

/**
 * A reader of a call's arguments in a model's own notation (Gemma 4's, gemma4Arguments.ts; Python's, pythonCalls.ts):
 * the text, where the reading is, and how deep in maps and lists; NotNotation where the text is not the notation.
 */
export class NotationReader {
    at = 0;
    private depth = 0;

    constructor(readonly text: string) {}

    space() {
        while (this.at < this.text.length && /\s/.test(this.text[this.at]))
            this.at++;
    }

    expect(piece: string) {
        if (!this.text.startsWith(piece, this.at))
            throw new NotNotation();
        this.at += piece.length;
    }

    /** Into a map or list. */
    protected enter() {
        if (++this.depth > maxDepth)
            throw new NotNotation();
    }

    /** Out of a map or list. */
    protected leave() {
        this.depth--;
    }
}
