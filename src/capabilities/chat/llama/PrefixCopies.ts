import type { LlamaContextSequence, Token } from "node-llama-cpp";
import { copySequenceState } from "../../../runtimes/llama/internals.js";
import { promptChunks } from "./promptChunks.js";
import { reusePromptPrefix } from "./reusePromptPrefix.js";
import { commonPrefixLength } from "./SequencePrefixCache.js";

type Waiter = {until: number, resolve: () => void};
type InFlight = {prompt: readonly Token[], ticket: number, waiters: Set<Waiter>};

/** Prompt tokens a copy must save over what the sequence keeps already: fewer are evaluated as quickly as copied. */
export const minCopiedTokens = 64;

/**
 * A prompt's tokens evaluated once per context rather than once per sequence: their KV cells are copied from the
 * sequence that holds them (llama.cpp's `llama_memory_seq_cp`, through node-llama-cpp 3.22's sequence copy) into the
 * sequence that needs them, which then evaluates only what follows.
 * - `fromOthers`: a request whose prompt shares more (by minCopiedTokens) with another sequence of the context, busy
 *   with another request or free, than with the one it took, or with the prompt an earlier request is evaluating
 *   (it waits for that then): parallel requests with one long system prompt (a coding agent's, a team's) evaluate it
 *   once, not once per sequence.
 * - `spread`: the choices of one request (`n` > 1, `best_of`): the first evaluates the prompt, the others copy it.
 * The copy takes the context's lock (it waits for the batch being decoded, and the next batch waits for it); with
 * node-llama-cpp's per-sequence KV streams it copies the source's whole stream (its context size's cells), which
 * costs far less than evaluating more than a few dozen tokens. Only for models whose sequences need no checkpoints
 * (not sliding-window, hybrid or recurrent ones: `supported`).
 */
export class PrefixCopies {
    /** Prompt tokens copied so far (the `los_prompt_cache_copied_tokens_total` metric). */
    copiedTokens = 0;
    /** The sequences a request's prompt is going into, in the order the requests took them. */
    private readonly inFlight = new Map<LlamaContextSequence, InFlight>();
    private tickets = 0;

    constructor(private readonly sequences: readonly LlamaContextSequence[]) {}

    static supported(sequence: LlamaContextSequence): boolean {
        return !sequence.needsCheckpoints;
    }

    /**
     * A request took `sequence` for `prompt` (until `done` with the ticket returned): later requests may wait for its
     * prompt and copy it.
     */
    evaluating(sequence: LlamaContextSequence, prompt: readonly Token[]): number {
        const ticket = ++this.tickets;
        this.inFlight.set(sequence, {prompt, ticket, waiters: new Set()});
        return ticket;
    }

    /** `sequence` evaluated more of its prompt: those waiting for that much of it go on. */
    progress(sequence: LlamaContextSequence) {
        const entry = this.inFlight.get(sequence);
        if (entry == null || entry.waiters.size === 0)
            return;
        const held = commonPrefixLength(sequence.contextTokens, entry.prompt);
        for (const waiter of entry.waiters)
            if (held >= waiter.until)
                waiter.resolve();
    }

    /** The request with `ticket` on `sequence` ended: nobody waits for it any more (the sequence may be another request's already). */
    done(sequence: LlamaContextSequence, ticket: number) {
        const entry = this.inFlight.get(sequence);
        if (entry?.ticket !== ticket)
            return;
        this.inFlight.delete(sequence);
        for (const waiter of entry?.waiters ?? [])
            waiter.resolve();
    }

    /**
     * `target` keeps `kept` tokens of `prompt`: when another sequence shares at least minCopiedTokens more, its cells
     * up to there are copied in. A sequence whose prompt (taken by an earlier request, still being evaluated) will share
     * more is waited for (until it has evaluated that far, its request ends, or `signal` aborts). Returns the prompt
     * tokens `target` keeps then (0 when a copy failed: it is emptied; fewer when the other sequence's request erased
     * some before the copy).
     */
    async fromOthers(target: LlamaContextSequence, kept: number, prompt: readonly Token[], signal: AbortSignal): Promise<number> {
        const limit = prompt.length - 1;
        const ticket = this.inFlight.get(target)?.ticket ?? Infinity;
        let best: {source: LlamaContextSequence, shared: number} | null = null;
        for (const source of this.sequences) {
            if (source === target)
                continue;
            const held = Math.min(commonPrefixLength(source.contextTokens, prompt), limit);
            // Only an earlier request's prompt is waited for: two requests never wait for each other.
            const entry = this.inFlight.get(source);
            const coming = entry != null && entry.ticket < ticket ? Math.min(commonPrefixLength(entry.prompt, prompt), limit) : 0;
            const shared = Math.max(held, coming);
            if (shared > (best?.shared ?? kept))
                best = {source, shared};
        }
        if (best == null || best.shared - kept < minCopiedTokens)
            return kept;
        // Its request may still be erasing what it held before, or evaluating the prompt.
        if (commonPrefixLength(best.source.contextTokens, prompt) < best.shared)
            await this.waitFor(best.source, best.shared, signal);
        const available = Math.min(commonPrefixLength(best.source.contextTokens, prompt), limit);
        if (available - kept < minCopiedTokens)
            return kept;
        await this.copy(target, best.source, available);
        return Math.min(commonPrefixLength(target.contextTokens, prompt), limit);
    }

    private async waitFor(source: LlamaContextSequence, until: number, signal: AbortSignal) {
        const entry = this.inFlight.get(source);
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

    /**
     * The choices of one request: the first (`first`, keeping `kept[0]` tokens) evaluates the prompt but its last token,
     * in chunks of `chunkSize` (`signal` is checked between them), and each other sequence that keeps fewer tokens by
     * minCopiedTokens copies them. Returns the tokens each keeps then, in order.
     */
    async spread(taken: readonly {sequence: LlamaContextSequence, kept: number}[], prompt: readonly Token[], chunkSize: number, signal: AbortSignal): Promise<number[]> {
        const [first, ...others] = taken;
        const shared = prompt.length - 1;
        if (!others.some(({kept}) => shared - kept >= minCopiedTokens))
            return taken.map(({kept}) => kept);
        await evaluatePrefix(first.sequence, prompt, first.kept, shared, chunkSize, signal, () => this.progress(first.sequence));
        const kept = [shared];
        for (const other of others) {
            signal.throwIfAborted();
            if (shared - other.kept < minCopiedTokens)
                kept.push(other.kept);
            else
                kept.push(await this.copy(other.sequence, first.sequence, shared));
        }
        return kept;
    }

    /** Copies up to `tokens` of `source` into `target`; how many it holds then. */
    private async copy(target: LlamaContextSequence, source: LlamaContextSequence, tokens: number): Promise<number> {
        const held = await copySequenceState(target, source, tokens);
        this.copiedTokens += held;
        return held;
    }
}

/** `sequence` keeps `prompt`'s first `from` tokens (the rest it holds is erased): evaluates them up to `to`, a chunk at a time. */
async function evaluatePrefix(sequence: LlamaContextSequence, prompt: readonly Token[], from: number, to: number, chunkSize: number, signal: AbortSignal,
    progress: () => void) {
    await reusePromptPrefix(sequence, from);
    if (from >= to)
        return;
    for (const chunk of promptChunks(to, from, chunkSize)) {
        signal.throwIfAborted();
        await sequence.evaluateWithoutGeneratingNewTokens(prompt.slice(chunk.start, chunk.end));
        progress();
    }
}
