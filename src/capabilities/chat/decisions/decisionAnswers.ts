import type { DecisionOutcome } from "../ChatEngine.js";
import type { DecisionAnswer, DecisionQuestionParam, DecisionUsage } from "./DecisionsWire.js";

/**
 * How sure an answer is: 1 minus the entropy of its distribution normalised by the entropy of a flat one over the same
 * options (ln n): 1 when one option holds all the mass, 0 when every option is equally likely.
 */
export function confidenceOf(probabilities: readonly number[]): number {
    if (probabilities.length < 2)
        return 1;
    const entropy = probabilities.reduce((sum, p) => p > 0 ? sum - p * Math.log(p) : sum, 0);
    return clamp01(1 - entropy / Math.log(probabilities.length));
}

/** A level's value: its position scaled to [0, 1] (the first level 0, the last 1). */
export function levelValue(index: number, levels: number): number {
    return levels < 2 ? 0 : index / (levels - 1);
}

/** A score: the probability-weighted level value, from 0 (all mass on the first level) to 1 (all on the last). */
export function scoreOf(probabilities: readonly number[]): number {
    return clamp01(probabilities.reduce((sum, p, index) => sum + p * levelValue(index, probabilities.length), 0));
}

/** The option with the most probability (the first of equals). */
export function mostLikely(probabilities: readonly number[]): number {
    return probabilities.reduce((best, p, index) => p > probabilities[best] ? index : best, 0);
}

/** The answers in question order, from the engine's probabilities per option. */
export function decisionAnswers(questions: readonly DecisionQuestionParam[], outcome: DecisionOutcome): DecisionAnswer[] {
    return questions.map((question, index): DecisionAnswer => {
        const probabilities = outcome.probabilities[index];
        const name = question.name ?? null;
        if (question.type === "predicate")
            return {type: "predicate", name, probability: probabilities[0]};
        if (question.type === "choice")
            return {
                type: "choice", name, choice: question.choices[mostLikely(probabilities)].value, confidence: confidenceOf(probabilities),
                probabilities: question.choices.map((choice, option) => ({value: choice.value, probability: probabilities[option]}))
            };
        return {
            type: "score", name, score: scoreOf(probabilities), confidence: confidenceOf(probabilities),
            probabilities: question.levels.map((level, option) => ({label: level.label, value: levelValue(option, question.levels.length), probability: probabilities[option]}))
        };
    });
}

/**
 * Usage: the input tokens are the shared prefix once and every question suffix as evaluated; of them, `cached_tokens`
 * the prefix tokens the prompt cache served, `cache_write_tokens` the prefix tokens this request evaluated and left in
 * the cache for the next one. Nothing is generated: `output_tokens` 0.
 */
export function decisionUsage(outcome: DecisionOutcome): DecisionUsage {
    const input = outcome.prefixTokens + outcome.suffixTokens;
    return {
        input_tokens: input,
        input_tokens_details: {cached_tokens: outcome.cachedTokens, cache_write_tokens: outcome.prefixTokens - outcome.cachedTokens},
        output_tokens: 0,
        output_tokens_details: {reasoning_tokens: 0},
        total_tokens: input
    };
}

function clamp01(value: number) {
    return Math.min(1, Math.max(0, value));
}
