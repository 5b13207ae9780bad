import type { LlamaContextSequence, LlamaModel, Token } from "node-llama-cpp";
import type { AdmissionQueue } from "../../../core/admission/AdmissionQueue.js";
import type { DecisionJob, DecisionOutcome, ReasoningFormat } from "../ChatEngine.js";
import { ContextLengthExceededError } from "../errors/ContextLengthExceededError.js";
import type { ChatPromptRenderer } from "./ChatPromptRenderer.js";
import type { DecisionLabel } from "./decisionLabels.js";
import { decisionPrompt } from "./decisionPrompt.js";
import { combineOrders, decisionOrders, decisionQuestionText } from "./decisionQuestionText.js";
import { reusePromptPrefix } from "./reusePromptPrefix.js";
import type { SequencePrefixCache } from "./SequencePrefixCache.js";

/** What of a chat engine decisions run on. */
export type DecisionEngineParts = {
    model: LlamaModel;
    renderer: ChatPromptRenderer;
    format: ReasoningFormat | null;
    labels: readonly DecisionLabel[];
    pool: AdmissionQueue;
    sequences: SequencePrefixCache<LlamaContextSequence>;
    contextSize: number;
    batchSize: number;
};

/** One question in one option order: its suffix tokens, and the label tokens' probabilities once evaluated. */
type Evaluation = {question: number, order: number[], tokens: Token[], labels: number[] | null};

/**
 * Answers `job`'s questions on this model. The input is rendered once (decisionPrompt) as the shared prefix; each
 * question, in each option order (decisionOrders), is a short suffix evaluated over it, and the next-token
 * distribution after it (node-llama-cpp's `controlledEvaluate` with `probabilities`: the model's softmax, no sampling
 * transformation) is read at the label tokens only. The request takes one sequence through admission (like a chat
 * request's choice), the one that keeps the most of the prefix (SequencePrefixCache); it evaluates the rest of the prefix
 * in batch-size chunks (the request's signal is checked between them and between questions), then the suffixes one after
 * another, erasing each after it. The sequence is given back holding the prefix, so the next request about the same
 * input starts from it.
 */
export async function decideQuestions(parts: DecisionEngineParts, job: DecisionJob, signal: AbortSignal): Promise<DecisionOutcome> {
    const {prefix, suffixOf} = decisionPrompt(parts.model, parts.renderer, parts.format, job.turns);
    const labelTexts = parts.labels.map((label) => label.text);
    const evaluations: Evaluation[] = job.questions.flatMap((question, index) => decisionOrders(question.options.length).map((order) => ({
        question: index, order, tokens: suffixOf(decisionQuestionText(question, labelTexts, order)), labels: null
    })));
    const longest = Math.max(...evaluations.map((evaluation) => evaluation.tokens.length));
    if (prefix.length + longest >= parts.contextSize)
        throw new ContextLengthExceededError(parts.contextSize, prefix.length + longest);

    // One sequence: the one the prompt cache says keeps the most of the prefix. A second sequence would evaluate the prefix
    // again (node-llama-cpp cannot copy a sequence's KV cache to another), which on a CPU costs more than its suffixes gain
    // from sharing batches (bench:decisions); other requests run on the other sequences meanwhile.
    const {release} = await parts.pool.acquire(1, signal);
    const [{sequence, kept}] = parts.sequences.take(prefix, 1);
    try {
        await reusePromptPrefix(sequence, kept);
        parts.sequences.record(prefix.length, kept);
        for (let start = kept; start < prefix.length; start += parts.batchSize) {
            signal.throwIfAborted();
            await sequence.evaluateWithoutGeneratingNewTokens(prefix.slice(start, start + parts.batchSize));
        }
        for (const evaluation of evaluations) {
            signal.throwIfAborted();
            evaluation.labels = await labelProbabilities(sequence, evaluation, parts.labels);
            await sequence.eraseContextTokenRanges([{start: prefix.length, end: sequence.nextTokenIndex}]);
        }
        parts.sequences.giveBack(sequence, 0);
    } catch (error) {
        // What a stopped evaluation left in the sequence is not worth trusting for the next prompt.
        await sequence.clearHistory().catch(() => {});
        parts.sequences.giveBack(sequence, 0);
        throw signal.aborted ? signal.reason : error;
    } finally {
        release();
    }

    const probabilities = job.questions.map((_, index) => {
        const own = evaluations.filter((evaluation) => evaluation.question === index);
        return combineOrders(own.map((evaluation) => evaluation.order), own.map((evaluation) => evaluation.labels!));
    });
    return {
        probabilities,
        prefixTokens: prefix.length,
        suffixTokens: evaluations.reduce((sum, evaluation) => sum + evaluation.tokens.length, 0),
        cachedTokens: kept
    };
}

/** The suffix evaluated after the prefix; the probabilities of the first labels (as many as the question has options) as the next token. */
async function labelProbabilities(sequence: LlamaContextSequence, evaluation: Evaluation, labels: readonly DecisionLabel[]): Promise<number[]> {
    const {tokens} = evaluation;
    const results = await sequence.controlledEvaluate([...tokens.slice(0, -1), [tokens.at(-1)!, {generateNext: {probabilities: true}}]]);
    const distribution = results.at(-1)?.next.probabilities;
    if (distribution == null)
        throw new Error("node-llama-cpp returned no next-token probabilities");
    return evaluation.order.map((_, index) => labels[index].tokens.reduce((sum, token) => sum + (distribution.get(token) ?? 0), 0));
}
