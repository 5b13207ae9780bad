import type { LlamaContextSequence, Token } from "node-llama-cpp";
import { assertSequenceCopy, copySequenceState, NodeLlamaInternalsError } from "../../../runtimes/llama/internals.js";
import { promptChunks } from "./promptChunks.js";
import { reusePromptPrefix } from "./reusePromptPrefix.js";
import { PromptsInFlight } from "./PromptsInFlight.js";
import { commonPrefixLength } from "./SequencePrefixCache.js";

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
 * - `spread`: the sequences of one request: a chat request's choices (`n` > 1, `best_of`), a decision's sequences (its
 *   input, the prefix of every question): the first evaluates the tokens they share, the others copy them.
 * The copy takes the context's lock (it waits for the batch being decoded, and the next batch waits for it); with
 * node-llama-cpp's per-sequence KV streams llama.cpp copies the source's whole stream (its context size's cells) at the
 * next decode, which the copy makes at once (copySequenceState), so it is made only when it saves enough tokens (at least
 * minCopiedTokens, and 1/256 of a sequence's context). Only for models whose sequences need no checkpoints (not
 * sliding-window, hybrid or recurrent ones: `supported`).
 */
export class PrefixCopies {
    /** Prompt tokens copied so far (the `los_prompt_cache_copied_tokens_total` metric). */
    copiedTokens = 0;
    /** The prompts requests are evaluating, which later requests may wait for. */
    readonly inFlight = new PromptsInFlight();
    /** Copies whose data llama.cpp has not moved yet (copySequenceState). */
    private readonly underWay = new Set<Promise<number>>();
    /** Prompt tokens a copy must save over what the sequence keeps already (see minCopiedTokens). */
    private readonly minCopied: number;

    /**
     * A copy moves the source's whole KV stream (its sequence's context size in cells), whatever it saves: for a long
     * context it must save more tokens to pay, at least 1/256 of the context (bench: a 65,536-token stream of a 12 M
     * model took 25 ms to copy against 10 ms to evaluate 64 tokens; a larger model's tokens cost far more to evaluate).
     */
    constructor(private readonly sequences: readonly LlamaContextSequence[]) {
        this.minCopied = Math.max(minCopiedTokens, Math.ceil(sequences[0].contextSize / 256));
    }

    /** Whether `sequence`'s model can have its prompts copied: no checkpoints needed, and node-llama-cpp has the fields (assertSequenceCopy). */
    static supported(sequence: LlamaContextSequence): boolean {
        if (sequence.needsCheckpoints)
            return false;
        try {
            assertSequenceCopy(sequence);
            return true;
        } catch (error) {
            if (error instanceof NodeLlamaInternalsError)
                return false;
            throw error;
        }
    }

    /**
     * `target` keeps `kept` tokens of `prompt`: when another sequence shares at least minCopied more, its cells up to
     * there are copied in. A sequence whose prompt (taken by an earlier request, still being evaluated) will share more is
     * waited for (until it holds that much, its request ends, or `signal` aborts). Returns the prompt tokens `target`
     * keeps then (0 when a copy failed: it is emptied; fewer when the other sequence's request erased some before the copy).
     */
    async fromOthers(target: LlamaContextSequence, kept: number, prompt: readonly Token[], signal: AbortSignal): Promise<number> {
        const limit = prompt.length - 1;
        const ticket = this.inFlight.ticketOf(target) ?? Infinity;
        let best: {source: LlamaContextSequence, shared: number, held: number} | null = null;
        for (const source of this.sequences) {
            if (source === target)
                continue;
            const held = Math.min(commonPrefixLength(source.contextTokens, prompt), limit);
            const coming = this.inFlight.comingTo(source, ticket);
            const shared = Math.max(held, coming == null ? 0 : Math.min(commonPrefixLength(coming.prompt, prompt), limit));
            // Ties: the sequence that holds it already (not one still waiting for it itself).
            if (shared > (best?.shared ?? kept) || (best != null && shared === best.shared && held > best.held))
                best = {source, shared, held};
        }
        if (best == null || best.shared - kept < this.minCopied)
            return kept;
        // Its request may still be erasing what it held before, or evaluating the prompt.
        if (best.held < best.shared)
            await this.inFlight.waitFor(best.source, best.shared, signal);
        const available = Math.min(commonPrefixLength(best.source.contextTokens, prompt), limit);
        if (available - kept < this.minCopied)
            return kept;
        await this.copy(target, best.source, prompt.slice(0, available), kept);
        // Those waiting for this request's prompt may copy it from here already.
        this.inFlight.progress(target);
        return Math.min(commonPrefixLength(target.contextTokens, prompt), limit);
    }

    /**
     * The sequences of one request that all need `tokens` (a prompt but its last token; a decision's prefix): the first
     * (keeping `taken[0].kept` of them) evaluates them, in chunks of `chunkSize` (`signal` is checked between them), and
     * each other sequence that keeps fewer by minCopied copies them. Returns the tokens each keeps then, in order.
     */
    async spread(taken: readonly {sequence: LlamaContextSequence, kept: number}[], tokens: readonly Token[], chunkSize: number, signal: AbortSignal): Promise<number[]> {
        const [first, ...others] = taken;
        const shared = tokens.length;
        if (!others.some(({kept}) => shared - kept >= this.minCopied))
            return taken.map(({kept}) => kept);
        await evaluatePrefix(first.sequence, tokens, first.kept, chunkSize, signal, () => this.inFlight.progress(first.sequence));
        const kept = [shared];
        for (const other of others) {
            signal.throwIfAborted();
            if (shared - other.kept < this.minCopied)
                kept.push(other.kept);
            else
                kept.push(await this.copy(other.sequence, first.sequence, tokens, other.kept));
        }
        return kept;
    }

    /** Once every copy under way has its data in place: before anything reads or replaces a sequence's state (DisplacedStates). */
    async settled(): Promise<void> {
        await Promise.allSettled([...this.underWay]);
    }

    /**
     * Copies what `source` holds of `tokens` into `target` (it held `kept` of them); how many it holds then. A copy that
     * fails costs only itself: `target` is emptied and evaluates the tokens.
     */
    private async copy(target: LlamaContextSequence, source: LlamaContextSequence, tokens: readonly Token[], kept: number): Promise<number> {
        const copying = copySequenceState(target, source, tokens).catch(async () => {
            await target.clearHistory();
            return 0;
        });
        this.underWay.add(copying);
        try {
            const held = await copying;
            // The last token it holds was evaluated (the decode that moves the data), not copied.
            this.copiedTokens += Math.max(0, held - 1 - kept);
            return held;
        } finally {
            this.underWay.delete(copying);
        }
    }
}

/** `sequence` keeps the first `from` of `tokens` (the rest it holds is erased): evaluates the others, a chunk at a time. */
async function evaluatePrefix(sequence: LlamaContextSequence, tokens: readonly Token[], from: number, chunkSize: number, signal: AbortSignal,
    progress: () => void) {
    await reusePromptPrefix(sequence, from);
    if (from >= tokens.length)
        return;
    for (const chunk of promptChunks(tokens.length, from, chunkSize)) {
        signal.throwIfAborted();
        await sequence.evaluateWithoutGeneratingNewTokens(tokens.slice(chunk.start, chunk.end));
        progress();
    }
}
