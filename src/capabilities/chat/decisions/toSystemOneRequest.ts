import { ApiError } from "../../../core/http/ApiError.js";
import type { DecisionAnswer, DecisionQuestionParam, DecisionRequest, SystemOneAnswer, SystemOneRequest } from "./DecisionsWire.js";

/**
 * A System One request as the /v1/decisions request it asks the same thing as: `state` (text as it is, JSON as JSON
 * text) is the input; each question, in the order of the `questions` object, keeps its key as its name. A `noul` is a
 * choice between the booleans true and false (its `criteria.true` / `criteria.false` as their descriptions), a `choice`'s
 * `criteria` object maps each option to its description or null, a `score`'s `criteria` lists its levels from low to
 * high. Criteria that do not fit are refused naming `questions.<name>.criteria`; more options than `maxOptions` too.
 */
export function toSystemOneRequest(request: SystemOneRequest, maxOptions: number): DecisionRequest {
    const questions = Object.entries(request.questions).map(([name, question]): DecisionQuestionParam => {
        const field = `questions.${name}`;
        const instructions = textOf(question.instructions);
        const criteria = question.criteria as unknown;
        if (question.type === "noul") {
            if (criteria != null && (typeof criteria !== "object" || Array.isArray(criteria)
                || Object.entries(criteria).some(([key, value]) => !["true", "false"].includes(key) || (value != null && typeof value !== "string"))))
                throw invalid(`${field}.criteria`, "a noul's criteria is an object with optional 'true' and 'false' descriptions");
            const descriptions = (criteria ?? {}) as {true?: string, false?: string};
            return {type: "choice", name, instructions, choices: [{value: true, description: descriptions.true}, {value: false, description: descriptions.false}]};
        }
        if (question.type === "choice") {
            if (criteria == null || typeof criteria !== "object" || Array.isArray(criteria)
                || Object.values(criteria).some((value) => value != null && typeof value !== "string"))
                throw invalid(`${field}.criteria`, "a choice's criteria is an object mapping each option to its description (or null)");
            const options = Object.entries(criteria as Record<string, string | null>);
            checkCount(options.length, `${field}.criteria`, maxOptions);
            return {type: "choice", name, instructions, choices: options.map(([value, description]) => ({value, description: description ?? undefined}))};
        }
        if (!Array.isArray(criteria) || criteria.some((level) => typeof level !== "string" || level === ""))
            throw invalid(`${field}.criteria`, "a score's criteria is a list of its levels (non-empty strings) from low to high");
        checkCount(criteria.length, `${field}.criteria`, maxOptions);
        return {type: "score", name, instructions, levels: (criteria as string[]).map((label) => ({label}))};
    });
    return {model: request.model, input: textOf(request.state), questions};
}

/** The answers keyed by question name: a noul's probability of true; a choice's and a score's probabilities keyed by option. */
export function toSystemOneAnswers(request: SystemOneRequest, answers: readonly DecisionAnswer[]): Record<string, SystemOneAnswer> {
    const names = Object.keys(request.questions);
    return Object.fromEntries(answers.map((answer, index): [string, SystemOneAnswer] => {
        const name = names[index];
        if (request.questions[name].type === "noul" && answer.type === "choice")
            return [name, {type: "noul", noul: answer.probabilities.find((option) => option.value === true)!.probability}];
        if (answer.type === "choice")
            return [name, {type: "choice", choice: String(answer.choice), confidence: answer.confidence,
                probabilities: Object.fromEntries(answer.probabilities.map((option) => [String(option.value), option.probability]))}];
        if (answer.type === "score")
            // System One's score is the expected level index (0 = the first level), not OpenAI's 0-1 position.
            return [name, {type: "score", score: answer.score * (answer.probabilities.length - 1), confidence: answer.confidence,
                probabilities: Object.fromEntries(answer.probabilities.map((level) => [level.label, level.probability]))}];
        throw new Error(`Unexpected answer type ${answer.type} for System One question '${name}'`);
    }));
}

function textOf(value: unknown): string {
    return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

function checkCount(count: number, field: string, maxOptions: number) {
    if (count < 2 || count > maxOptions)
        throw invalid(field, `it has ${count} options; this model answers 2 to ${maxOptions}`);
}

function invalid(field: string, why: string) {
    return ApiError.invalidRequest(`Invalid '${field}': ${why}.`, field);
}
