import type { LlamaContextSequence, Token } from "node-llama-cpp";
import { commonPrefixLength } from "./SequencePrefixCache.js";

type Waiter = {until: number, resolve: () => void};
type Entry = {prompt: readonly Token[], ticket: number, waiters: Set<Waiter>};

/** A request's prompt going into a sequence, as `PromptsInFlight.comingTo` sees it. */
export type PromptInFlight = {prompt: readonly Token[], ticket: number};

/**
 * The prompts requests are evaluating on a context's sequences, in the order the requests took them (tickets), so a
 * later request sharing a prefix can wait until a sequence holds it and copy it (PrefixCopies). A request waits only
 * for an earlier ticket, so two requests never wait for each other. Every waiter is woken: when the sequence holds
 * what it waits for (`progress`), when the request ends (`end`), or when another request takes the sequence.
 */
export class PromptsInFlight {
    private readonly entries = new Map<LlamaContextSequence, Entry>();
    private tickets = 0;

    /** A request took `sequence` for `prompt`; the function returned ends it (idempotent), which the request calls before it gives the sequence back. */
    begin(sequence: LlamaContextSequence, prompt: readonly Token[]): {ticket: number, end: () => void} {
        // A request that ended without `end` (it should not happen) still wakes its waiters.
        this.wake(this.entries.get(sequence));
        const entry: Entry = {prompt, ticket: ++this.tickets, waiters: new Set()};
        this.entries.set(sequence, entry);
        return {ticket: entry.ticket, end: () => {
            if (this.entries.get(sequence) === entry)
                this.entries.delete(sequence);
            this.wake(entry);
        }};
    }

    /** The prompt an earlier request than `ticket` is evaluating on `sequence`, if any. */
    comingTo(sequence: LlamaContextSequence, ticket: number): PromptInFlight | null {
        const entry = this.entries.get(sequence);
        return entry != null && entry.ticket < ticket ? entry : null;
    }

    ticketOf(sequence: LlamaContextSequence): number | null {
        return this.entries.get(sequence)?.ticket ?? null;
    }

    /** `sequence` evaluated more of its prompt: those waiting for that much of it go on. */
    progress(sequence: LlamaContextSequence) {
        const entry = this.entries.get(sequence);
        if (entry == null || entry.waiters.size === 0)
            return;
        const held = commonPrefixLength(sequence.contextTokens, entry.prompt);
        for (const waiter of entry.waiters)
            if (held >= waiter.until)
                waiter.resolve();
    }

    /** Until `sequence` holds `until` tokens of its prompt, its request ends, or `signal` aborts (which rejects). */
    async waitFor(sequence: LlamaContextSequence, until: number, signal: AbortSignal): Promise<void> {
        const entry = this.entries.get(sequence);
        if (entry == null)
            return;
        signal.throwIfAborted();
        await new Promise<void>((resolve, reject) => {
            const finish = () => {
                entry.waiters.delete(waiter);
                signal.removeEventListener("abort", onAbort);
            };
            const onAbort = () => {
                finish();
                reject(signal.reason);
            };
            const waiter: Waiter = {until, resolve: () => {
                finish();
                resolve();
            }};
            entry.waiters.add(waiter);
            signal.addEventListener("abort", onAbort, {once: true});
        });
    }

    private wake(entry: Entry | undefined) {
        for (const waiter of entry?.waiters ?? [])
            waiter.resolve();
    }
}
