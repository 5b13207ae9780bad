import { ApiError } from "../../../core/http/ApiError.js";
import type { ChatTurn, DecisionJob, DecisionQuestion, TurnImage } from "../ChatEngine.js";
import { imageLimits } from "../vision/imageLimits.js";
import { imageFromUrl } from "../vision/toChatImage.js";
import type { DecisionContentPart, DecisionInputItem, DecisionInstructions, DecisionQuestionParam, DecisionRequest } from "./DecisionsWire.js";

/** What the model reads for a predicate: is the statement true or false (the answer's probability is the first option's). */
export const predicateOptions = ["Yes, true", "No, false"];

/**
 * A /v1/decisions request as the engine's job: the input as chat turns (developer and system messages as system turns,
 * JSON parts as JSON text, a function or custom tool call with its output as an assistant turn's call and result), each
 * question as its instructions and the text of its options (a predicate: yes / no; a choice: its value, with its
 * description after a colon; a score: its levels in order; an `input_image` of a message where it stands among the
 * text, a base64 `data:` URL). Refused with a 400 naming the field in OpenAI's words: an image for a model that does not
 * see (naming `visionModels`, the served ones that do) or outside a message's content, a choice or score question without
 * its choices or levels, options that read alike (repeated, or `true` and `"true"`), a tool output
 * without its call, more options than `maxOptions`.
 */
export function toDecisionJob(request: DecisionRequest, maxOptions: number, model: {id: string, vision?: boolean} = {id: request.model}, visionModels: readonly string[] = []): DecisionJob {
    const job = {turns: toTurns(request.input), questions: request.questions.map((question, index) => toQuestion(question, `questions[${index}]`, maxOptions))};
    const images = job.turns.flatMap((turn) => turn.images ?? []);
    if (images.length > 0 && model.vision !== true)
        throw ApiError.invalidRequest(`The model '${model.id}' does not take images (it is a text-only model); ${visionModels.length === 0
            ? "no model this server serves takes images"
            : `models served here that do: ${visionModels.map((id) => `'${id}'`).join(", ")}`}.`, images[0].image.source, "model_not_multimodal");
    if (images.length > imageLimits.maxImages)
        throw ApiError.invalidRequest(`Too many images: the request carries ${images.length}; at most ${imageLimits.maxImages} are accepted.`,
            images[imageLimits.maxImages].image.source, "too_many_images");
    return job;
}

function toQuestion(question: DecisionQuestionParam, field: string, maxOptions: number): DecisionQuestion {
    const instructions = partsText(question.instructions, `${field}.instructions`);
    if (question.type === "predicate")
        return {instructions, options: predicateOptions};
    const listField = `${field}.${question.type === "choice" ? "choices" : "levels"}`;
    const list: readonly unknown[] | undefined = question.type === "choice" ? question.choices : question.levels;
    if (list == null)
        throw ApiError.invalidRequest(`Missing required parameter: '${listField}' (a ${question.type} question's ${question.type === "choice" ? "choices" : "levels"}).`, listField);
    // The text the model reads for each option (a boolean as its JSON text), and with its description: two options
    // that read alike (the same text once Unicode-normalised and trimmed) cannot be told apart.
    const texts = question.type === "choice"
        ? question.choices.map((choice) => typeof choice.value === "string" ? choice.value : String(choice.value))
        : question.levels.map((level) => level.label);
    const descriptions = question.type === "choice" ? question.choices.map((choice) => choice.description) : question.levels.map((level) => level.description);
    const options = texts.map((text, index) => describe(text, descriptions[index]));
    const key = question.type === "choice" ? "value" : "label";
    const kind = question.type === "choice" ? "choice" : "level";
    for (const [read, field] of [[texts, key], [options, "description"]] as const) {
        const seen = new Map<string, number>();
        for (const [index, text] of read.entries()) {
            const alike = text.normalize("NFC").trim();
            const first = seen.get(alike);
            if (first != null)
                throw ApiError.invalidRequest(`Invalid '${listField}[${index}].${field}': each ${kind} must be unique as the model reads it; ` +
                    `${listField}[${index}] reads ${JSON.stringify(text)}, as ${listField}[${first}] does.`, `${listField}[${index}].${field}`);
            seen.set(alike, index);
        }
    }
    if (options.length > maxOptions)
        throw ApiError.invalidRequest(`Invalid '${listField}': this model can answer at most ${maxOptions} options (its answer labels); got ${options.length}.`, listField);
    return {instructions, options};
}

function describe(text: string, description: string | undefined) {
    return description == null || description === "" ? text : `${text}: ${description}`;
}

function toTurns(input: DecisionRequest["input"]): ChatTurn[] {
    if (typeof input === "string")
        return [{role: "user", content: input}];
    const outputs = new Map<string, string>();
    for (const [index, item] of input.entries())
        if (item.type === "function_call_output" || item.type === "custom_tool_call_output") {
            const calls = input.some((other) => (other.type === "function_call" || other.type === "custom_tool_call") && other.call_id === item.call_id);
            if (!calls)
                throw ApiError.invalidRequest(`Invalid 'input[${index}].call_id': no call in the input has call_id '${item.call_id}'.`, `input[${index}].call_id`);
            outputs.set(item.call_id, partsText(item.output, `input[${index}].output`));
        }
    const turns: ChatTurn[] = [];
    for (const [index, item] of input.entries()) {
        const field = `input[${index}]`;
        if (item.type === "function_call_output" || item.type === "custom_tool_call_output")
            continue;
        if (item.type === "function_call" || item.type === "custom_tool_call") {
            for (const key of ["call_id", "name", item.type === "function_call" ? "arguments" : "input"] as const)
                if (typeof (item as Record<string, unknown>)[key] !== "string")
                    throw ApiError.invalidRequest(`Missing required parameter: '${field}.${key}'.`, `${field}.${key}`);
            const args = item.type === "function_call" ? parseArguments(item.arguments) : {input: item.input};
            const call = {name: item.name, arguments: args, result: outputs.get(item.call_id) ?? ""};
            const last = turns.at(-1);
            if (last?.role === "assistant" && last.toolCalls != null && last.content === "")
                last.toolCalls.push(call);
            else
                turns.push({role: "assistant", content: "", toolCalls: [call]});
            continue;
        }
        const message = item as Extract<DecisionInputItem, {role: unknown}>;
        if (message.role == null)
            throw ApiError.invalidRequest(`Missing required parameter: '${field}.role'.`, `${field}.role`);
        if (message.content == null)
            throw ApiError.invalidRequest(`Missing required parameter: '${field}.content'.`, `${field}.content`);
        const role = message.role === "developer" || message.role === "system" ? "system" : message.role;
        turns.push(role === "user" ? {role, ...withImages(message.content, `${field}.content`)} : {role, content: partsText(message.content, `${field}.content`)});
    }
    return turns;
}

function parseArguments(text: string): unknown {
    try {
        return JSON.parse(text);
    } catch {
        return text;
    }
}

/** A user message's parts: the text as partsText's, each image where it stands in it. */
function withImages(content: DecisionInstructions, field: string): {content: string, images?: TurnImage[]} {
    if (typeof content === "string")
        return {content};
    let text = "";
    const images: TurnImage[] = [];
    content.forEach((part, index) => {
        const at = `${field}[${index}]`;
        if (part.type === "input_image") {
            if (typeof part.image_url !== "string")
                throw ApiError.invalidRequest(`Missing required parameter: '${at}.image_url'.`, `${at}.image_url`);
            images.push({image: imageFromUrl(part.image_url, undefined, `${at}.image_url`, at), offset: text.length});
            return;
        }
        text += (text === "" && images.length === 0 ? "" : "\n") + partsText([part], field, index);
    });
    return images.length === 0 ? {content: text} : {content: text, images};
}

/** Text parts as they are, JSON parts as JSON text, joined by a line break; an image (outside a user message) is refused naming its part. */
function partsText(content: DecisionInstructions, field: string, first = 0): string {
    if (typeof content === "string")
        return content;
    return content.map((part: DecisionContentPart, offset) => {
        const index = first + offset;
        switch (part.type) {
            case "input_text":
            case "output_text":
                return textOf(part.text, `${field}[${index}].text`);
            case "refusal":
                return textOf(part.refusal, `${field}[${index}].refusal`);
            case "input_json":
                if (part.data == null)
                    throw ApiError.invalidRequest(`Missing required parameter: '${field}[${index}].data'.`, `${field}[${index}].data`);
                return JSON.stringify(part.data);
            case "input_image":
                throw ApiError.invalidRequest(`Invalid '${field}[${index}]': images are accepted only in the content of a user message of 'input'.`, `${field}[${index}]`);
        }
    }).join("\n");
}

function textOf(value: unknown, field: string): string {
    if (typeof value !== "string")
        throw ApiError.invalidRequest(`Missing required parameter: '${field}'.`, field);
    return value;
}
