import type { LlamaModel, Token } from "node-llama-cpp";
import { StopSequenceFilter } from "../StopSequenceFilter.js";
import { TokenTextDecoder } from "./TokenTextDecoder.js";

/**
 * The text side of one choice: tokens -> UTF-8-safe text -> stop-sequence filter -> `onText`.
 *
 * This work is done off the decode path: `add` only queues the token, and the queue is processed
 * two event-loop turns later, after node-llama-cpp (which dispatches on the next turn) has started
 * decoding the following token on its worker thread. Detokenizing, the stop filter and writing the
 * SSE chunk then overlap with the decode instead of delaying it. A stop sequence is therefore
 * noticed up to one token late; that extra token is generated but never emitted or counted.
 */
export class ChoiceText {
    private readonly decoder: TokenTextDecoder;
    private readonly stopFilter: StopSequenceFilter;
    private readonly queue: Token[] = [];
    private scheduled = false;
    private processed = 0;
    private closed = false;
    text = "";

    constructor(model: LlamaModel, promptTokens: readonly Token[], stop: readonly string[], private readonly onText: (text: string) => void) {
        this.decoder = new TokenTextDecoder(model, promptTokens);
        this.stopFilter = new StopSequenceFilter(stop);
    }

    /** Whether a stop sequence has been seen (in the tokens processed so far). */
    get stopped() {
        return this.stopFilter.hasStopped;
    }

    /** How many tokens belong to the output: up to the one that completed a stop sequence. */
    get tokenCount() {
        return this.processed;
    }

    add(token: Token) {
        this.queue.push(token);
        if (this.scheduled)
            return;
        this.scheduled = true;
        setImmediate(() => setImmediate(() => {
            this.scheduled = false;
            this.drain();
        }));
    }

    /** Processes every queued token now. */
    drain() {
        while (this.queue.length > 0 && !this.closed && !this.stopFilter.hasStopped) {
            this.processed++;
            this.emit(this.stopFilter.push(this.decoder.push(this.queue.shift()!)));
        }
    }

    /** End of generation: what was held back (an incomplete character, a possible stop prefix) is released. */
    finish() {
        this.drain();
        if (!this.stopFilter.hasStopped) {
            this.emit(this.stopFilter.push(this.decoder.flush()));
            this.emit(this.stopFilter.flush());
        }
        this.closed = true;
    }

    /** Generation failed or was aborted: nothing more is emitted. */
    close() {
        this.closed = true;
        this.queue.length = 0;
    }

    private emit(piece: string) {
        if (piece === "" || this.closed)
            return;
        this.text += piece;
        this.onText(piece);
    }
}
