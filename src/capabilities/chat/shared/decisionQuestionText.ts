import type { DecisionQuestion } from "../ChatEngine.js";
import { labelsFor, type DecisionLabel, type DecisionLabelPair, type DecisionLabels } from "./decisionLabels.js";

/**
 * The text of a question as the model reads it, after the input (the last user turn): the instructions, the options
 * each after its label, and the request to answer with a label alone. `order` says which option each label stands for.
 */
export function decisionQuestionText(question: DecisionQuestion, labels: readonly string[], order: readonly number[]): string {
    const options = order.map((option, index) => `${labels[index]}. ${question.options[option]}`);
    // Many two-character labels (more options than single-token labels) are described rather than listed again.
    const which = labels[0].length === 1 ? labels.slice(0, order.length).join(", ") : `a letter and a digit, such as ${labels[0]}`;
    return `${question.instructions}\n\nOptions:\n${options.join("\n")}\n\nAnswer with the label of one option (${which}) and nothing else.`;
}

/** The option orders every question is asked in: as given, and reversed (position bias is averaged out over the two). */
export function decisionOrders(optionCount: number): number[][] {
    const given = Array.from({length: optionCount}, (_, index) => index);
    return [given, [...given].reverse()];
}

/**
 * A question's answer from its evaluations: per order, the label tokens' probabilities (in label order), each
 * normalised over the labels shown, then each option's probability averaged over the orders. Labels that got no mass
 * at all (every probability underflowed) count as a flat answer for that order.
 */
export function combineOrders(orders: readonly (readonly number[])[], labelProbabilities: readonly (readonly number[])[]): number[] {
    const optionCount = orders[0].length;
    const combined = new Array<number>(optionCount).fill(0);
    for (const [index, order] of orders.entries()) {
        const raw = labelProbabilities[index];
        const total = raw.reduce((sum, value) => sum + value, 0);
        for (const [label, option] of order.entries())
            combined[option] += (total > 0 ? raw[label] / total : 1 / optionCount) / orders.length;
    }
    return combined;
}

/** A question in one option order: its labels as shown (labelsFor) and its text. */
export type AskedQuestion<Token extends number> = {
    question: number, order: number[], shown: readonly DecisionLabel<Token>[] | readonly DecisionLabelPair<Token>[], text: string
};

/** Every question in every option order (decisionOrders), with the labels its options get on the model. */
export function askQuestions<Token extends number>(questions: readonly DecisionQuestion[], labels: DecisionLabels<Token>): AskedQuestion<Token>[] {
    return questions.flatMap((question, index) => {
        const shown = labelsFor(labels, question.options.length);
        const texts = shown.map((label) => label.text);
        return decisionOrders(question.options.length).map((order) => ({question: index, order, shown, text: decisionQuestionText(question, texts, order)}));
    });
}

/** Each question's answer (combineOrders), in question order, from the label probabilities of every asked question. */
export function answerQuestions(questionCount: number, asked: readonly {question: number, order: readonly number[]}[],
    labelProbabilities: readonly (readonly number[])[]): number[][] {
    return Array.from({length: questionCount}, (_, index) => {
        const own = asked.flatMap((evaluation, at) => evaluation.question === index ? [at] : []);
        return combineOrders(own.map((at) => asked[at].order), own.map((at) => labelProbabilities[at]));
    });
}
