import type { TokenLogprob } from "../ChatEngine.js";
import { StopSequenceFilter, type StopSearch } from "./StopSequenceFilter.js";
import type { TokenTextDecoder } from "./TokenTextDecoder.js";

/** A token's logprobs entry, built lazily (off the decode path), and where its text lies in the decoded output. */
type Pending = {entry: () => TokenLogprob, start?: number, end?: number};

/**
 * The text side of one choice: tokens -> UTF-8-safe text -> stop-sequence filter -> `onText`.
 *
 * This work is done off the decode path: `add` only queues the token, and the queue is processed
 * two event-loop turns later, after node-llama-cpp (which dispatches on the next turn) has started
 * decoding the following token on its worker thread. Detokenizing, the stop filter and writing the
 * SSE chunk then overlap with the decode instead of delaying it. A stop sequence is therefore
 * noticed up to one token late; that extra token is generated but never emitted or counted.
 *
 * Logprobs entries travel with the text: an entry goes out with the piece that completes its
 * token's text, so a token held back (half a UTF-8 character, a possible stop-sequence prefix) has
 * its entry in the chunk where its text goes out. With a stop sequence, the tokens with some text
 * before the cut keep their entries (the one that straddles the cut included, as its text is partly
 * content); tokens wholly inside the stop sequence, or after it, have none.
 *
 * Either engine's: the llama engine's on the main thread (deferred as above), the vision engine's in its worker, which
 * uses `push` (its stop is noticed at once, so generation stops on the token that completed it).
 */
export class ChoiceText<Token extends number = number> {
    private readonly stopFilter: StopSequenceFilter;
    private readonly queue: {token: Token, entry?: () => TokenLogprob, search: StopSearch}[] = [];
    private readonly pendingEntries: Pending[] = [];
    private scheduled = false;
    private processed = 0;
    private closed = false;
    private decodedLength = 0;
    private withLogprobs = false;
    text = "";
    /** Every entry emitted so far, when entries are given to `add`. */
    readonly logprobs: TokenLogprob[] = [];

    constructor(
        private readonly decoder: TokenTextDecoder<Token>,
        stop: readonly string[],
        private readonly onText: (text: string, logprobs?: TokenLogprob[]) => void
    ) {
        this.stopFilter = new StopSequenceFilter(stop);
    }

    /** Whether a stop sequence has been seen (in the tokens processed so far). */
    get stopped() {
        return this.stopFilter.hasStopped;
    }

    /** The stop sequence that ended the output, if one did. */
    get stopSequence(): string | null {
        return this.stopFilter.matched;
    }

    /** How many tokens belong to the output: up to the one that completed a stop sequence. */
    get tokenCount() {
        return this.processed;
    }

    /**
     * `entry` builds the token's logprobs entry; given for every token or for none. `search`: where stop sequences are
     * looked for in its text (a thinking model's: in its answer only). Processed two event-loop turns later.
     */
    add(token: Token, entry?: () => TokenLogprob, search: StopSearch = "search") {
        this.queue.push({token, entry, search});
        this.withLogprobs ||= entry != null;
        if (this.scheduled)
            return;
        this.scheduled = true;
        setImmediate(() => setImmediate(() => {
            this.scheduled = false;
            this.drain();
        }));
    }

    /** As `add`, processed at once (with every token queued before it). */
    push(token: Token, entry?: () => TokenLogprob) {
        this.queue.push({token, entry, search: "search"});
        this.withLogprobs ||= entry != null;
        this.drain();
    }

    /** Processes every queued token now. */
    drain() {
        while (this.queue.length > 0 && !this.closed && !this.stopFilter.hasStopped) {
            this.processed++;
            const {token, entry, search} = this.queue.shift()!;
            const before = this.decoder.pendingCount;
            if (entry != null)
                this.pendingEntries.push({entry});
            const decoded = this.decoder.push(token);
            this.placeEntries(before + 1 - this.decoder.pendingCount, decoded);
            const safe = this.stopFilter.take(decoded, search);
            if (search !== "hold")
                this.emit(safe);
        }
    }

    /** End of generation: what was held back (an incomplete character, a possible stop prefix) is released. */
    finish() {
        this.drain();
        if (!this.stopFilter.hasStopped && !this.closed) {
            const before = this.decoder.pendingCount;
            const decoded = this.decoder.flush();
            this.placeEntries(before, decoded);
            this.emit(this.stopFilter.push(decoded));
            this.emit(this.stopFilter.flush());
        }
        // Entries of tokens whose text is empty and came last, or that straddle a stop sequence.
        this.emit("", true);
        this.closed = true;
    }

    /** Generation failed or was aborted: nothing more is emitted. */
    close() {
        this.closed = true;
        this.queue.length = 0;
    }

    /** The oldest `count` unplaced entries are the tokens whose text `decoded` is (the decoder released them). */
    private placeEntries(count: number, decoded: string) {
        const start = this.decodedLength;
        this.decodedLength += decoded.length;
        let left = count;
        for (const pending of this.pendingEntries) {
            if (left === 0)
                break;
            if (pending.start != null)
                continue;
            Object.assign(pending, {start, end: this.decodedLength});
            left--;
        }
    }

    private emit(piece: string, last = false) {
        if (this.closed)
            return;
        this.text += piece;
        const entries = this.releaseEntries(last);
        if (piece === "" && entries.length === 0)
            return;
        this.logprobs.push(...entries);
        this.onText(piece, this.withLogprobs ? entries : undefined);
    }

    /** Entries whose text is now wholly out; at the end (or at a stop), those with any text out. */
    private releaseEntries(last: boolean): TokenLogprob[] {
        const out = this.text.length;
        const stopped = this.stopFilter.hasStopped;
        const final = last || stopped;
        let count = 0;
        while (count < this.pendingEntries.length) {
            const pending = this.pendingEntries[count];
            if (pending.start == null)
                break;
            const released = stopped ? pending.start < out : last || pending.end! <= out;
            if (!released)
                break;
            count++;
        }
        const entries = this.pendingEntries.splice(0, count).map((pending) => pending.entry());
        if (final)
            this.pendingEntries.length = 0;
        return entries;
    }
}
