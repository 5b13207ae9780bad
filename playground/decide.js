// @ts-check
import { call, element, labelled, modelOptions } from "./api.js";

/** @typedef {{id: string, aliases: string[]}} Model */
/** @typedef {{type: "predicate", instructions: string} | {type: "choice", instructions: string, choices: {value: string}[]} | {type: "score", instructions: string, levels: {label: string}[]}} Question */
/** @typedef {{type: string, probability?: number, choice?: string, score?: number, confidence?: number, probabilities?: {value?: string | boolean, label?: string, probability: number}[]}} Answer */

/**
 * A question per line: `yes/no: statement`, `choice: instructions | a, b, c` or `score: instructions | low, mid, high`.
 * @param {string} line
 * @returns {Question | null}
 */
export function parseQuestion(line) {
    const match = /^\s*(yes\/no|predicate|choice|score)\s*:\s*(.*)$/i.exec(line);
    if (match == null)
        return null;
    const kind = match[1].toLowerCase();
    const [instructions, list = ""] = match[2].split("|");
    const options = list.split(",").map((option) => option.trim()).filter((option) => option !== "");
    if (kind === "choice")
        return {type: "choice", instructions: instructions.trim(), choices: options.map((value) => ({value}))};
    if (kind === "score")
        return {type: "score", instructions: instructions.trim(), levels: options.map((label) => ({label}))};
    return {type: "predicate", instructions: instructions.trim()};
}

/**
 * The Decide tab: an input and questions about it, answered by /v1/decisions on a chat model; a bar per option.
 * @param {HTMLElement} root
 * @param {Model[]} models
 */
export function mountDecide(root, models) {
    const model = element("select", {name: "model"}, modelOptions(models));
    const input = element("textarea", {name: "input", rows: "4"});
    input.value = "I was charged twice for order 4411 and I want one of the charges refunded today.";
    const questions = element("textarea", {name: "questions", rows: "4"});
    questions.value = ["yes/no: The customer asks for a refund.", "choice: Which team should handle it? | billing, shipping, product", "score: How frustrated is the customer? | calm, annoyed, angry"].join("\n");
    const ask = element("button", {type: "submit"}, ["Decide"]);
    const error = element("p", {class: "error", role: "alert"});
    const answers = element("div", {class: "decisions"});
    const note = element("p", {class: "muted"});
    const form = element("form", {class: "card"}, [element("div", {class: "row"}, [labelled("Model", model)]), labelled("Input", input),
        labelled("Questions, one per line (yes/no: …, choice: … | a, b, score: … | low, high)", questions), ask]);
    root.append(form, element("div", {class: "card"}, [note, error, answers]));

    form.addEventListener("submit", async (event) => {
        event.preventDefault();
        error.textContent = "";
        const lines = questions.value.split("\n").filter((line) => line.trim() !== "");
        const parsed = lines.map(parseQuestion);
        const bad = parsed.findIndex((question) => question == null);
        if (bad >= 0) {
            error.textContent = `Line ${bad + 1} is not a question: start it with "yes/no:", "choice:" or "score:".`;
            return;
        }
        ask.disabled = true;
        try {
            const response = await call("/v1/decisions", {body: {model: model.value, input: input.value, questions: parsed}, model: model.value, onWait: (text) => note.textContent = text});
            /** @type {{answers: Answer[], usage: {input_tokens: number, input_tokens_details: {cached_tokens: number}}}} */
            const result = await response.json();
            note.textContent = `${result.usage.input_tokens} input tokens, ${result.usage.input_tokens_details.cached_tokens} from the prompt cache`;
            answers.replaceChildren(...result.answers.map((answer, index) => drawAnswer(lines[index], answer)));
        } catch (failure) {
            error.textContent = failure instanceof Error ? failure.message : String(failure);
        } finally {
            ask.disabled = false;
        }
    });
}

/**
 * @param {string} question
 * @param {Answer} answer
 */
function drawAnswer(question, answer) {
    const options = answer.type === "predicate"
        ? [{name: "yes", probability: answer.probability ?? 0}, {name: "no", probability: 1 - (answer.probability ?? 0)}]
        : (answer.probabilities ?? []).map((option) => ({name: String(option.label ?? option.value), probability: option.probability}));
    const summary = answer.type === "choice" ? `${answer.choice} (confidence ${answer.confidence?.toFixed(2)})`
        : answer.type === "score" ? `score ${answer.score?.toFixed(2)} (confidence ${answer.confidence?.toFixed(2)})`
        : `p(yes) ${answer.probability?.toFixed(3)}`;
    return element("div", {class: "decision"}, [
        element("p", {}, [element("strong", {}, [question.replace(/\|.*$/, "").trim()]), ` → ${summary}`]),
        ...options.map(({name, probability}) => {
            const bar = element("span", {class: "bar"});
            bar.style.width = `${(probability * 100).toFixed(1)}%`;
            return element("div", {class: "option", "data-probability": probability.toFixed(4)}, [element("span", {class: "label"}, [name]), element("span", {class: "track"}, [bar]), element("span", {}, [probability.toFixed(3)])]);
        })
    ]);
}
