/**
 * The start phase of a streamed response whose engine calls back (see streamResponse): `started` resolves
 * at the first result (`reached()`) or when the work ends, whichever is first, and rejects when the work
 * fails before either, so that failure is still a plain JSON error.
 */
export class StreamStart {
    readonly started: Promise<void>;
    private reach!: () => void;

    constructor(work: Promise<unknown>) {
        this.started = new Promise<void>((resolve, reject) => {
            this.reach = resolve;
            work.then(() => resolve(), reject);
        });
        // The work's own awaiter reports its failure; a start phase already over must not leave it unhandled here.
        this.started.catch(() => {});
    }

    /** The first result is there: the headers may go out. */
    reached(): void {
        this.reach();
    }
}
