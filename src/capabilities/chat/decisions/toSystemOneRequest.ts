import { ApiError } from "../../../core/http/ApiError.js";
import type { DecisionAnswer, DecisionContentPart, DecisionInputItem, DecisionQuestionParam, DecisionRequest, SystemOneAnswer, SystemOneImageAsset, SystemOneRequest } from "./DecisionsWire.js";

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
        const alike = (criteria as string[]).map((level) => level.normalize("NFC").trim());
        const repeated = alike.findIndex((level, index) => alike.indexOf(level) !== index);
        if (repeated >= 0)
            throw invalid(`${field}.criteria`, `each level must be unique; ${JSON.stringify(criteria[repeated])} reads as an earlier one (at ${repeated})`);
        checkCount(criteria.length, `${field}.criteria`, maxOptions);
        return {type: "score", name, instructions, levels: (criteria as string[]).map((label) => ({label}))};
    });
    const state = textOf(request.state);
    return {model: request.model, input: request.assets == null || Object.keys(request.assets).length === 0 ? state : withAssets(state, request.assets).input, questions};
}

/** The asset a part of toSystemOneRequest's input message is the image of (its key), to name it in an error about that part. */
export function assetOfPart(request: SystemOneRequest, part: number): string | undefined {
    return request.assets == null ? undefined : withAssets(textOf(request.state), request.assets).partAssets[part];
}

/**
 * The state as one user message whose images stand where the state first names their assets (each key's first
 * occurrence in the state's text, the image right after the key): TypeSafe's rule that an asset is referenced by its
 * key wherever it appears in the state. An asset the state never names is refused (as TypeSafe refuses it).
 */
function withAssets(state: string, assets: Record<string, SystemOneImageAsset>): {input: DecisionInputItem[], partAssets: (string | undefined)[]} {
    const content: DecisionContentPart[] = [];
    const partAssets: (string | undefined)[] = [];
    let from = 0;
    for (const {key, at} of placedAssets(state, assets)) {
        if (at > from) {
            content.push({type: "input_text", text: state.slice(from, at)});
            partAssets.push(undefined);
        }
        const asset = assets[key];
        content.push({type: "input_image", image_url: `data:image/${asset.format};base64,${asset.data_base64}`});
        partAssets.push(key);
        from = at;
    }
    if (from < state.length)
        content.push({type: "input_text", text: state.slice(from)});
    return {input: [{type: "message", role: "user", content}], partAssets};
}

/** Each asset with where its image goes in the state's text (right after the key's first occurrence), in the text's order. */
function placedAssets(state: string, assets: Record<string, SystemOneImageAsset>): {key: string, at: number}[] {
    return Object.keys(assets).map((key) => {
        const found = state.indexOf(key);
        if (found < 0)
            throw invalid(`assets.${key}`, "the state never mentions this asset (an asset is referenced by its key in the state, e.g. \"state\": {\"photo\": \"" + key + "\"})");
        return {key, at: found + key.length};
    }).sort((a, b) => a.at - b.at);
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
