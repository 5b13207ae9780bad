import type { LlamaContextSequence, Token } from "node-llama-cpp";
import type { AdmissionQueue } from "../../../core/admission/AdmissionQueue.js";
import type { ChatTurn, DecisionJob, DecisionOutcome } from "../ChatEngine.js";
import { ContextLengthExceededError } from "../errors/ContextLengthExceededError.js";
import type { DecisionLabel, DecisionLabelPair, DecisionLabels } from "../shared/decisionLabels.js";
import { labelProbabilities } from "../shared/labelProbabilities.js";
import type { DecisionTokens } from "./decisionPrompt.js";
import { answerQuestions, askQuestions } from "../shared/decisionQuestionText.js";
import { reusePromptPrefix } from "./reusePromptPrefix.js";
import type { PrefixCopies } from "./PrefixCopies.js";
import type { SequencePrefixCache } from "./SequencePrefixCache.js";

/** What of a chat engine decisions run on. */
export type DecisionEngineParts = {
    /** The prefix and question suffixes (decisionTokens): on the main thread when small, in the render thread otherwise. */
    prepare(turns: ChatTurn[], questionTexts: string[], signal: AbortSignal): Promise<DecisionTokens>;
    labels: DecisionLabels<Token>;
    pool: AdmissionQueue;
    sequences: SequencePrefixCache<LlamaContextSequence>;
    /** The prefix evaluated by one sequence and copied into the others (null: each evaluates it). */
    copies: PrefixCopies | null;
    contextSize: number;
    batchSize: number;
};

/** One question in one option order: its suffix tokens, its options' labels, and the labels' probabilities once evaluated. */
type Evaluation = {question: number, order: number[], tokens: Token[], shown: readonly DecisionLabel<Token>[] | readonly DecisionLabelPair<Token>[], labels: number[] | null};

/**
 * Answers `job`'s questions on this model. The input is rendered once (decisionPrompt) as the shared prefix; each
 * question, in each option order (decisionOrders), is a short suffix evaluated over it, and the next-token
 * distribution after it (node-llama-cpp's `controlledEvaluate` with `probabilities`: the model's softmax, no sampling
 * transformation) is read at the label tokens only. The request takes sequences through admission (like a chat
 * request's choices): one, or more when its suffixes outweigh the prefix; the prompt cache picks those that keep the most
 * of the prefix (SequencePrefixCache). Each evaluates the rest of the prefix in batch-size chunks (the request's signal is
 * checked between them and between questions), then takes suffixes one after another, erasing each after it; the
 * sequences' suffixes share batches. Each sequence is given back holding the prefix, so the next request about the same
 * input starts from it.
 */
export async function decideQuestions(parts: DecisionEngineParts, job: DecisionJob, signal: AbortSignal): Promise<DecisionOutcome> {
    const asked = askQuestions(job.questions, parts.labels);
    const {prefix, suffixes} = await parts.prepare(job.turns, asked.map((evaluation) => evaluation.text), signal);
    const evaluations: Evaluation[] = asked.map(({question, order, shown}, index) => ({question, order, shown, tokens: suffixes[index], labels: null}));
    const longest = Math.max(...evaluations.map((evaluation) => evaluation.tokens.length));
    if (prefix.length + longest >= parts.contextSize)
        throw new ContextLengthExceededError(parts.contextSize, prefix.length + longest);

    // Sequences: as many as the suffixes pay for, a sequence for each prefix's worth of suffix tokens (more would push out the
    // conversations the other sequences hold, and wait for all of them); their suffixes share batches (bench:decisions).
    // With PrefixCopies the first evaluates the prefix and the others copy it; otherwise each evaluates it.
    const suffixTokens = evaluations.reduce((sum, evaluation) => sum + evaluation.tokens.length, 0);
    const count = Math.max(1, Math.min(parts.pool.capacity, evaluations.length, Math.floor(suffixTokens / Math.max(1, prefix.length))));
    const {release} = await parts.pool.acquire(count, signal);
    const taken = parts.sequences.take(prefix, count);
    const cached = taken.map(({kept}) => kept);
    const cachedTokens = Math.max(...cached);
    if (parts.copies != null && taken.length > 1) {
        try {
            const kept = await parts.copies.spread(taken, prefix, parts.batchSize, signal);
            kept.forEach((tokens, index) => taken[index].kept = tokens);
        } catch (error) {
            for (const {sequence} of taken) {
                await sequence.clearHistory().catch(() => {});
                parts.sequences.giveBack(sequence, 0);
            }
            release();
            throw error;
        }
    }
    const stopAll = new AbortController();
    const stop = AbortSignal.any([signal, stopAll.signal]);
    let next = 0;
    const outcomes = await Promise.allSettled(taken.map(async ({sequence, kept}, index) => {
        try {
            await reusePromptPrefix(sequence, kept);
            parts.sequences.record(prefix.length, cached[index]);
            for (let start = kept; start < prefix.length; start += parts.batchSize) {
                stop.throwIfAborted();
                await sequence.evaluateWithoutGeneratingNewTokens(prefix.slice(start, start + parts.batchSize));
            }
            while (next < evaluations.length) {
                stop.throwIfAborted();
                const evaluation = evaluations[next++];
                evaluation.labels = await evaluateLabels(sequence, evaluation);
                await sequence.eraseContextTokenRanges([{start: prefix.length, end: sequence.nextTokenIndex}]);
            }
            parts.sequences.giveBack(sequence, 0);
        } catch (error) {
            stopAll.abort(error);
            // What a stopped evaluation left in the sequence is not worth trusting for the next prompt.
            await sequence.clearHistory().catch(() => {});
            parts.sequences.giveBack(sequence, 0);
            throw error;
        }
    }));
    release();
    const failed = outcomes.find((outcome) => outcome.status === "rejected");
    if (failed != null)
        throw signal.aborted ? signal.reason : failed.reason;

    return {
        probabilities: answerQuestions(job.questions.length, evaluations, evaluations.map((evaluation) => evaluation.labels!)),
        prefixTokens: prefix.length,
        suffixTokens,
        cachedTokens
    };
}

/**
 * The suffix evaluated after the prefix; the probabilities of the question's labels as what comes next (labelProbabilities):
 * each first label a pair uses is evaluated once after the suffix (one token) and erased again.
 */
async function evaluateLabels(sequence: LlamaContextSequence, evaluation: Evaluation): Promise<number[]> {
    const {tokens, shown} = evaluation;
    const results = await sequence.controlledEvaluate([...tokens.slice(0, -1), [tokens.at(-1)!, {generateNext: {probabilities: true}}]]);
    const distribution = nextProbabilities(results.at(-1));
    return labelProbabilities(shown, (token) => distribution.get(token) ?? 0, async (first) => {
        const after = await sequence.controlledEvaluate([[first.token, {generateNext: {probabilities: true}}]]);
        const next = nextProbabilities(after.at(-1));
        await sequence.eraseContextTokenRanges([{start: sequence.nextTokenIndex - 1, end: sequence.nextTokenIndex}]);
        return (token) => next.get(token) ?? 0;
    });
}

function nextProbabilities(result: {next: {probabilities?: ReadonlyMap<Token, number>}} | undefined): ReadonlyMap<Token, number> {
    const distribution = result?.next.probabilities;
    if (distribution == null)
        throw new Error("node-llama-cpp returned no next-token probabilities");
    return distribution;
}
