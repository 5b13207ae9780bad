import { ApiError } from "../../core/http/ApiError.js";

/**
 * Bounds of `chat_template_kwargs` (besides its 64 keys, in the schema): each distinct set is handed to a template
 * wrapper built for it (rendering the template about 15 times, each with a copy of the set), and a template may
 * render any of it, so a 9 MB value cost seconds per request. Real sets are a few switches (`enable_thinking`,
 * `reasoning_effort`) or a short list.
 */
const maxTemplateKwargsChars = 64 * 1024;
const maxTemplateKwargsDepth = 16;

/** `kwargs` as given, or a 400 naming `chat_template_kwargs` when its JSON is longer than maxTemplateKwargsChars or nests deeper than maxTemplateKwargsDepth. */
export function checkTemplateKwargs(kwargs: Record<string, unknown> | null | undefined): Record<string, unknown> | null {
    if (kwargs == null)
        return null;
    // A lower bound of the JSON's length first (each string's characters and quotes), so that a huge value is refused without being serialized.
    let length = 0;
    const walk = (value: unknown, depth: number): void => {
        if (depth > maxTemplateKwargsDepth)
            throw ApiError.invalidRequest(
                `Invalid 'chat_template_kwargs': nested more than ${maxTemplateKwargsDepth} levels deep.`, "chat_template_kwargs");
        if (typeof value === "string")
            length += value.length + 2;
        else if (value !== null && typeof value === "object")
            for (const [key, item] of Array.isArray(value) ? value.entries() : Object.entries(value)) {
                length += typeof key === "string" ? key.length + 3 : 1;
                walk(item, depth + 1);
            }
        else
            length += 1;
        if (length > maxTemplateKwargsChars)
            throw tooLarge();
    };
    walk(kwargs, 1);
    if (JSON.stringify(kwargs).length > maxTemplateKwargsChars)
        throw tooLarge();
    return kwargs;
}

function tooLarge() {
    return ApiError.invalidRequest(
        `Invalid 'chat_template_kwargs': its JSON is longer than ${maxTemplateKwargsChars.toLocaleString("en-US")} characters. ` +
        "Template variables are switches and short values; send text as messages.", "chat_template_kwargs");
}
