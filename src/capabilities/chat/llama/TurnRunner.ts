import type { LlamaContextSequence, LlamaModel, Token } from "node-llama-cpp";
import type { ChatJob, ChatRunHooks, ChoiceResult } from "../ChatEngine.js";
import type { EngineLoad } from "../../../core/engines/EngineLoad.js";
import { choiceSeed } from "../shared/choiceSeed.js";
import { ChoiceOutput } from "./ChoiceOutput.js";
import { DecodeStepBarrier } from "./DecodeStepBarrier.js";
import type { DisplacedStates } from "./DisplacedStates.js";
import { generateChoice } from "./generateChoice.js";
import type { PrefixCopies } from "./PrefixCopies.js";
import { wholeChunkTokens } from "./promptChunks.js";
import { promptEcho } from "./promptEcho.js";
import type { RawDistributionTap } from "./RawDistributionTap.js";
import type { SequencePrefixCache, TakenSequence } from "./SequencePrefixCache.js";
import type { ModelSpeculation } from "./speculation/ModelSpeculation.js";
import type { TokenBytes } from "./TokenBytes.js";
import { reasoningOf, type RawTurnPrompt, type Turn } from "./TurnPlanner.js";

/** What of a chat engine its turns run on. */
export type TurnRunnerParts = {
    model: LlamaModel;
    /** Tokens per llama.cpp batch, also the prompt chunk grid. */
    batchSize: number;
    /** The context's free sequences, each a request takes by what it keeps of its prompt. */
    sequences: SequencePrefixCache<LlamaContextSequence>;
    /** Prompt tokens copied between sequences rather than evaluated again (null: each sequence evaluates its own). */
    copies: PrefixCopies | null;
    /** Conversations pushed out of the sequences by others, kept on disk (null: not kept); asked per turn: the engine sets them up only once its load has restored the saved prompt cache. */
    displaced(): DisplacedStates | null;
    speculation: ModelSpeculation;
    distributionTap: RawDistributionTap;
    tokenBytes: TokenBytes;
    /** Control tokens outputs keep as text (the markup of the model's calls and reasoning: llamaDetokenize). */
    preservedTokens: ReadonlySet<Token>;
    /** The engine's admission queue's load: whether a request's sequences were the only ones busy when it started. */
    load(): EngineLoad;
};

/**
 * A chat engine's turns on the sequences their jobs leased: each takes the sequences that keep the most of its prompt,
 * may get its conversation back from disk (DisplacedStates) or its prompt's prefix copied from another sequence
 * (PrefixCopies), echoes a raw prompt when asked, then generates its choices side by side (the first evaluates the
 * prompt, the others copy it) and gives the sequences back with what they hold for the next request.
 */
export class TurnRunner {
    /** Requests that got their sequences so far: tells a request whether another one ran beside it. */
    private leasesGranted = 0;
    /** Keeps the choices generating on the context in step, one shared batch a token. */
    private readonly stepBarrier = new DecodeStepBarrier();

    constructor(private readonly parts: TurnRunnerParts) {}

    /** The job on its leased sequences: the prompt echoed if asked, then its choices side by side; the sequences go back at the end. */
    async run(job: ChatJob, hooks: ChatRunHooks, turn: Turn, release: () => void): Promise<ChoiceResult[]> {
        let taken: TakenSequence<LlamaContextSequence>[];
        try {
            taken = this.parts.sequences.take(turn.prompt.tokens, job.n);
        } catch (error) {
            release();
            throw error;
        }
        // The first choice's sequence evaluates the prompt: a later request sharing it may wait for it and copy it (not an
        // echo with logprobs, which evaluates it apart, nor a request that generates nothing).
        const inFlight = echoesWithLogprobs(job, turn) || turn.maxTokens <= 0 ? undefined : this.parts.copies?.inFlight.begin(taken[0].sequence, turn.prompt.tokens);
        // The one way back, once: the prompt's waiters woken first (the next request may take the sequence at once), then
        // the sequences (each with the tokens it evaluated in whole prompt chunks, 0 on failure) and the lease.
        let returned = false;
        const giveBack = (wholeChunks: readonly number[] = []) => {
            if (returned)
                return;
            returned = true;
            inFlight?.end();
            taken.forEach(({sequence}, index) => this.parts.sequences.giveBack(sequence, wholeChunks[index] ?? 0));
            release();
        };
        try {
            return await this.runTaken(job, hooks, turn, taken, giveBack);
        } finally {
            giveBack();
        }
    }

    /** run's work; what fails leaves its sequences as they are worth keeping (emptied where unsure) for run to give back. */
    private async runTaken(job: ChatJob, hooks: ChatRunHooks, turn: Turn, taken: TakenSequence<LlamaContextSequence>[],
        giveBack: (wholeChunks: readonly number[]) => void): Promise<ChoiceResult[]> {
        const {copies, sequences, batchSize} = this.parts;
        const displaced = this.parts.displaced();
        const promptTokens = turn.prompt.tokens;
        const slots = taken.map(({sequence}) => sequence);
        // Not for an echo with logprobs (it evaluates the prompt from the start anyway), nor for a request already gone.
        const echoes = echoesWithLogprobs(job, turn);
        if (job.n === 1 && displaced != null && !echoes && !hooks.signal.aborted)
            taken[0].kept = await displaced.swap(taken[0].sequence, taken[0].kept, promptTokens, () => copies?.settled());
        if (job.n === 1 && copies != null && !echoes && !hooks.signal.aborted && sequences.mode !== "off")
            taken[0].kept = await copies.fromOthers(taken[0].sequence, taken[0].kept, promptTokens, hooks.signal);
        const leaseNumber = ++this.leasesGranted;
        const aloneAtStart = this.parts.load().busy === job.n;
        // Hooks only once the caller has its run (it resumes in a microtask; this waits for the next turn).
        await new Promise((resolve) => setImmediate(resolve));
        if (turn.prompt.kind === "raw" && turn.prompt.rawPrompt.echo === true) {
            try {
                hooks.onPrompt?.(await this.echo(turn.prompt, job, hooks.signal, slots[0]));
            } catch (error) {
                // As for a failed choice below: what the evaluation left is not worth trusting.
                await slots[0].clearHistory().catch(() => {});
                throw error;
            }
        }
        // Cached: the prompt tokens a choice did not evaluate for this request, what its sequence held before it or copied
        // from another request's (fromOthers above); not what the choices copy from each other here: the first evaluates
        // the prompt, the others copy it.
        const cached = taken.map(({kept}) => kept);
        if (job.n > 1 && copies != null && !echoes && turn.maxTokens > 0) {
            try {
                const kept = await copies.spread(taken, promptTokens.slice(0, -1), batchSize, hooks.signal);
                kept.forEach((tokens, index) => taken[index].kept = tokens);
            } catch (error) {
                for (const sequence of slots)
                    await sequence.clearHistory().catch(() => {});
                throw error;
            }
        }
        // One failing choice stops its siblings; the request's own signal stops them all.
        const stopAll = new AbortController();
        const signal = AbortSignal.any([hooks.signal, stopAll.signal]);
        const outcomes = await Promise.allSettled(taken.map(async ({sequence, kept}, index): Promise<ChoiceResult> => {
            try {
                return await this.runChoice(job, hooks, turn, index, sequence, kept, Math.min(kept, cached[index]), signal);
            } catch (error) {
                stopAll.abort(error);
                // What a failed evaluation left in the sequence is not worth trusting for the next prompt.
                await sequence.clearHistory().catch(() => {});
                throw error;
            }
        }));
        // Sequences go back only once every choice has let go of its own.
        // For the exact cache: the prompt went in whole chunks of the grid only if nothing shared its batches
        // (another choice or request would have), which is certain when nobody else ran from start to end.
        const alone = job.n === 1 && aloneAtStart && this.leasesGranted === leaseNumber;
        const wholeChunks = alone ? wholeChunkTokens(promptTokens.length, batchSize) : 0;
        giveBack(outcomes.map((outcome) => outcome.status === "fulfilled" ? wholeChunks : 0));
        const results: ChoiceResult[] = [];
        for (const outcome of outcomes) {
            if (outcome.status === "rejected")
                throw hooks.signal.aborted ? hooks.signal.reason : outcome.reason;
            results.push(outcome.value);
        }
        return results;
    }

    /** A raw prompt as echoed back (legacy completions' `echo`), its tokens' logprobs evaluated on the first choice's sequence when asked. */
    private echo(prompt: RawTurnPrompt, job: ChatJob, signal: AbortSignal, sequence: LlamaContextSequence) {
        return promptEcho({
            model: this.parts.model, tokens: prompt.tokens, clientStart: prompt.clientStart,
            text: typeof prompt.rawPrompt.prompt === "string" ? prompt.rawPrompt.prompt : null,
            logprobs: job.logprobs == null ? undefined : {
                topLogprobs: job.logprobs, bytes: this.parts.tokenBytes, tap: this.parts.distributionTap, sequence, chunkSize: this.parts.batchSize, signal
            }
        });
    }

    /** Choice `index` generated on its sequence, its output handed to the hooks as it comes. */
    private async runChoice(
        job: ChatJob, hooks: ChatRunHooks, turn: Turn, index: number, sequence: LlamaContextSequence, kept: number, cached: number, signal: AbortSignal
    ): Promise<ChoiceResult> {
        const {model, batchSize, copies, distributionTap, tokenBytes} = this.parts;
        const reasoning = reasoningOf(turn.prompt);
        const output = new ChoiceOutput(index, hooks, turn.calls,
            reasoning == null ? null : {format: reasoning.format, start: reasoning.start}, job.logprobs != null);
        const speculation = this.parts.speculation.forChoice(sequence, turn.speculate);
        hooks.onPromptCache?.(index, cached);
        const generated = await generateChoice({
            model,
            sequence,
            promptTokens: turn.prompt.tokens,
            preservedTokens: this.parts.preservedTokens,
            maxTokens: turn.maxTokens,
            stop: job.stop,
            temperature: job.sampling.temperature,
            topP: job.sampling.topP,
            topK: job.sampling.topK,
            minP: job.sampling.minP,
            repeatPenalty: job.sampling.repeatPenalty,
            seed: choiceSeed(job.sampling.seed, index),
            frequencyPenalty: job.sampling.frequencyPenalty,
            presencePenalty: job.sampling.presencePenalty,
            tokenBias: turn.tokenBias,
            grammar: turn.grammar,
            promptChunkSize: batchSize,
            keptPromptTokens: kept,
            stepBarrier: this.stepBarrier,
            signal,
            logprobs: job.logprobs == null ? undefined : {topLogprobs: job.logprobs, tap: distributionTap, bytes: tokenBytes},
            reasoning,
            speculation: speculation.settings,
            onPromptProgress: copies == null ? undefined : () => copies.inFlight.progress(sequence),
            onText: (text, logprobs) => output.push(text, logprobs)
        });
        speculation.done();
        const outcome = {...generated, cachedPromptTokens: cached};
        this.parts.sequences.record(turn.prompt.tokens.length, cached);
        const result = output.finish(outcome);
        hooks.onFinish?.(result);
        return result;
    }
}

/** A legacy completion echoing its prompt with logprobs: the prompt is evaluated from its start on the first sequence (promptEcho). */
function echoesWithLogprobs(job: ChatJob, turn: Turn): boolean {
    return turn.prompt.kind === "raw" && turn.prompt.rawPrompt.echo === true && job.logprobs != null;
}
