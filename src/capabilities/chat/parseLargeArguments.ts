import { describeJsonHazard } from "../../core/http/findJsonHazard.js";
import { maxJsonDepth } from "../../core/http/jsonBody.js";
import { parseJsonOffThread } from "../../core/http/parseJsonOffThread.js";
import { maxChatJsonValues } from "./chatCompletionSchema.js";
import { isJsonObject } from "../../core/validation/isJsonObject.js";

/**
 * Tool-call `arguments` strings at least this long are parsed in the JSON parse thread: on the main thread a
 * 9 MB one took about 40 ms, during which every other request waited (and the prompt-size floor then refused it).
 */
export const offThreadArgumentsChars = 64 * 1024;

/** One call's arguments may hold as many JSON values, as deep, as a chat request body itself. */
const argumentBounds = {maxDepth: maxJsonDepth, maxValues: maxChatJsonValues};

/** The large tool calls' arguments, by their `function` object: parsed, or why not (toChatJob reads them instead of parsing). */
export class ParsedArguments {
    readonly values = new WeakMap<object, unknown>();
    readonly refusals = new WeakMap<object, string>();
}

/**
 * Parses, off the main thread, the large `arguments` strings of the assistant tool calls in `messages` (a chat
 * completions request's, as the Responses and Messages adapters also build it); toChatJob parses smaller ones itself.
 */
export async function parseLargeArguments(messages: unknown): Promise<ParsedArguments> {
    const parsed = new ParsedArguments();
    if (!Array.isArray(messages))
        return parsed;
    const pending: Promise<void>[] = [];
    for (const message of messages) {
        const calls = isJsonObject(message) ? message.tool_calls : undefined;
        if (!Array.isArray(calls))
            continue;
        for (const call of calls) {
            const fn = isJsonObject(call) ? call.function : undefined;
            if (!isJsonObject(fn) || typeof fn.arguments !== "string" || fn.arguments.length < offThreadArgumentsChars)
                continue;
            pending.push(parseJsonOffThread(fn.arguments, argumentBounds).then(
                (reply) => "value" in reply ? void parsed.values.set(fn, reply.value) : void parsed.refusals.set(fn, `valid JSON, but it ${describeJsonHazard(reply.hazard, argumentBounds)}`),
                () => void parsed.refusals.set(fn, "not valid JSON")));
        }
    }
    await Promise.all(pending);
    return parsed;
}

