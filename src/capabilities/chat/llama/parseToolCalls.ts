import type { ChatToolFunction, GeneratedToolCall, ParameterMarkup, ToolCallFormat } from "../ChatEngine.js";
import { gemma4ArgumentsJson } from "./gemma4Arguments.js";
import { afterObjectCall, jsonObjectEnd } from "./jsonObjectEnd.js";
import { argumentsFromMarkup, findPiece, pieceAt, withoutSpace } from "./parameterMarkup.js";
import { callStartOf, findNameEnd, firstCallStartOf, isShortStart, listItemStartOf } from "./callMarkers.js";
import { pythonArgumentsEnd, pythonArgumentsJson } from "./pythonCalls.js";

/**
 * A call's `arguments` (a JSON object's text) from what the model wrote between its name and its end, or null when
 * that is not a call's arguments; `cut`: the generation stopped inside the call (what was written so far).
 */
export type ArgumentsReader = (name: string, written: string, cut: boolean) => string | null;

/**
 * The JSON object as written (trimmed); for a format with arguments in markup, the markup read into one (parameterMarkup.ts);
 * in Gemma 4's notation or Python's (LFM2's), that read into one (gemma4Arguments.ts, pythonCalls.ts; a call cut short has none).
 */
export function argumentsReader(format: ToolCallFormat, functions: readonly ChatToolFunction[]): ArgumentsReader {
    if (format.notation === "gemma4")
        return (_name, written, cut) => gemma4ArgumentsJson(written) ?? (cut ? "" : null);
    if (format.notation === "python")
        return (_name, written, cut) => pythonArgumentsJson(written) ?? (cut ? "" : null);
    const markup = format.parameters;
    if (markup == null)
        return jsonArguments;
    const schemas = new Map(functions.map((fn) => [fn.name, fn.parameters]));
    return (name, written, cut) => argumentsFromMarkup(written, markup, schemas.get(name), cut, format.suffix);
}

export const jsonArguments: ArgumentsReader = (_name, written, cut) => cut || isJsonObject(written.trim()) ? written.trim() : null;

/**
 * Splits generated text into the content before the first call (trailing whitespace trimmed) and
 * the calls written in the template's format (`prefix name paramsPrefix <arguments> suffix`,
 * separated by whitespace or `betweenCalls`, or items of a list, `format.list`; the prefix and params prefix as
 * callMarkers.ts reads them). Arguments
 * are what `read` makes of the text between (the JSON text as generated, trimmed, for most templates).
 *
 * - Null when there is no call, or when the first call is malformed (unknown name, arguments that
 *   are not a JSON object, no suffix): then the whole text is content.
 * - After one or more well-formed calls, whatever follows that is not another well-formed call is
 *   dropped.
 * - `truncated` (generation stopped at the token limit; used for grammar-forced calls, which can
 *   only be unfinished, never malformed): a last call cut short is kept with the arguments written
 *   so far (as OpenAI does), and `complete` says whether every call was finished; a call cut before
 *   its name is whole is dropped, and so is the start of a prefix that ends the text (never content).
 *
 * ToolCallStream is the streaming counterpart; both must give the same content and arguments.
 */
export function parseToolCalls(text: string, format: ToolCallFormat, names: ReadonlySet<string>, truncated = false, read: ArgumentsReader = jsonArguments):
    {content: string, calls: GeneratedToolCall[], complete: boolean} | null {
    const start = callStartOf(format);
    const firstStart = firstCallStartOf(format);
    let first = firstStart.find(text, 0);
    // A first call's short form (Qwen3-Coder's `<function=` without `<tool_call>`) is one only with a name the request
    // declares (as llama.cpp reads it): a mention of the markup in text is text, and the search goes on past it.
    while (first != null && isShortStart(text, first.start, format, start) && !shortStartIsCall(text, first.end, format, names))
        first = firstStart.find(text, first.start + 1);
    if (first == null) {
        // A forced call cut before its prefix was whole (`<tool_call>\n{"na`): the call's start, not content.
        const partial = truncated ? firstStart.partialAtEnd(text) : 0;
        return partial === 0 ? null : {content: text.slice(0, text.length - partial).trimEnd(), calls: [], complete: false};
    }
    const content = text.slice(0, first.start).trimEnd();
    const calls: GeneratedToolCall[] = [];
    let at = first.end;
    for (;;) {
        const found = findNameEnd(text, format, at);
        const nameEnd = found === "never" ? null : found;
        if (nameEnd == null)
            return truncated ? {content, calls, complete: false} : calls.length === 0 ? null : {content, calls, complete: true};
        const name = callName(text.slice(at, nameEnd.start), format);
        if (!names.has(name))
            return calls.length === 0 ? null : {content, calls, complete: true};
        at = nameEnd.end;
        const end = findCallEnd(text, format, at);
        if (end == null) {
            if (truncated)
                return {content, calls: [...calls, {name, arguments: read(name, text.slice(at), true) ?? "", cut: true}], complete: false};
            return calls.length === 0 ? null : {content, calls, complete: true};
        }
        const argumentsText = read(name, text.slice(at, end.start), false);
        if (argumentsText == null)
            return calls.length === 0 ? null : {content, calls, complete: true};
        calls.push({name, arguments: argumentsText});
        at = afterObjectCall(text, end.end, format);
        if (format.list != null) {
            const after = afterListedCall(text, at, format);
            if (after == null || after === "partial")
                return {content, calls, complete: true};
            at = after.at;
            if (after.next)
                continue;
        }
        if (format.betweenCalls !== "" && text.startsWith(format.betweenCalls, at))
            at += format.betweenCalls.length;
        while (at < text.length && /\s/.test(text[at]) && start.at(text, at) == null)
            at++;
        const next = start.at(text, at);
        if (next == null)
            return {content, calls, complete: true};
        at = next;
    }
}

/** Whether the text after a first call's short form is a declared function's name and the markup after it. */
function shortStartIsCall(text: string, at: number, format: ToolCallFormat, names: ReadonlySet<string>): boolean {
    const nameEnd = findNameEnd(text, format, at);
    return nameEnd != null && nameEnd !== "never" && names.has(callName(text.slice(at, nameEnd.start), format));
}

export function isJsonObject(text: string) {
    try {
        const value = JSON.parse(text);
        return value != null && typeof value === "object" && !Array.isArray(value);
    } catch {
        return false;
    }
}

/** A format whose arguments are the JSON the model writes (not markup, not another notation): they can stream as written. */
export function argumentsAreJson(format: ToolCallFormat): boolean {
    return format.parameters == null && format.notation == null;
}

/**
 * After a call in a list (`format.list`), from `at`: the next call's name (`next`, past the separator and the item's
 * markup), or past the list's end; `partial` when the text ends where either may still come (whitespace, a separator,
 * the start of the item's markup or of the list's end); null when what follows is not the list's. ToolCallStream asks
 * the same between a list's calls.
 */
export function afterListedCall(text: string, at: number, format: ToolCallFormat): {at: number, next: boolean} | "partial" | null {
    const list = format.list!;
    at = skipSpace(text, at);
    // The list's end, with whitespace around and between its tags as the model writes it.
    const end = pieceAt(text, at, list.end);
    if (typeof end === "number")
        return {at: end, next: false};
    const endMayCome = end === "partial";
    // Kimi-K2's calls follow one another with no separator: the next call's markup alone.
    if (text.startsWith(list.separator, at)) {
        const start = listItemStartOf(format);
        const itemAt = skipSpace(text, at + list.separator.length);
        const item = start.at(text, itemAt);
        if (item != null)
            return {at: item, next: true};
        if (start.partialAtEnd(text.slice(itemAt)) === text.length - itemAt)
            return "partial";
    }
    return endMayCome ? "partial" : null;
}

function skipSpace(text: string, at: number): number {
    while (at < text.length && /\s/.test(text[at]))
        at++;
    return at;
}

/**
 * Where a call's arguments end, from `at`: its suffix, with any whitespace around and between its tags (a model of a
 * Hermes-style template writing `}</tool_call>` for the template's `}\n</tool_call>`, Reka-Edge's); for a format without
 * one (Mistral's and Devstral's `[TOOL_CALLS]NAME[ARGS]{...}`), the end of the JSON object the arguments are; in
 * Python's notation, the `)` that closes them.
 */
export function findCallEnd(text: string, format: ToolCallFormat, at: number): {start: number, end: number} | null {
    if (format.notation === "python") {
        const close = pythonArgumentsEnd(text, at);
        return close == null ? null : {start: close, end: close + 1};
    }
    if (format.list != null && argumentsAreJson(format)) {
        const objectEnd = jsonObjectEnd(text, at);
        return objectEnd == null ? null : jsonItemEnd(text, objectEnd, format);
    }
    if (format.suffix === "") {
        const end = jsonObjectEnd(text, at);
        return end == null ? null : {start: end, end};
    }
    for (let from = at; ;) {
        const found = findPiece(text, format.suffix, from, true);
        if (found == null || format.parameters == null || endsMarkupCall(text, at, found.start, format.parameters))
            return found;
        from = found.start + 1;
    }
}

/**
 * Whether a call's end found at `suffixStart` ends a call in markup whose arguments start at `argumentsStart`: right
 * after the last value's end (or after the name: no arguments), not inside a value (MiniMax-M2's call end is `/invoke`,
 * which a URL argument may hold: `http://host/chain/invoke`; GLM's `/tool_call>`).
 */
export function endsMarkupCall(text: string, argumentsStart: number, suffixStart: number, markup: ParameterMarkup): boolean {
    const valueEnd = withoutSpace(markup.valueEnd);
    let at = suffixStart, matched = 0;
    while (at > argumentsStart && matched < valueEnd.length) {
        const char = text[--at];
        if (/\s/.test(char))
            continue;
        if (char !== valueEnd[valueEnd.length - 1 - matched])
            return false;
        matched++;
    }
    return matched === valueEnd.length || (matched === 0 && at === argumentsStart);
}

/**
 * Where a call of a JSON list ends once its arguments' object closed at `objectEnd`: the suffix (the call object's `}`)
 * after it, what comes between (Apriel's `, "id": ...`) read past; null while it has not come.
 */
function jsonItemEnd(text: string, objectEnd: number, format: ToolCallFormat): {start: number, end: number} | null {
    const suffix = findPiece(text, format.suffix, objectEnd, true);
    return suffix == null ? null : {start: objectEnd, end: suffix.end};
}

/** A call's name from what precedes its arguments: trimmed, and without the call id a format writes after it (Mistral Small 3.2's `[CALL_ID]...`). */
export function callName(written: string, format: ToolCallFormat): string {
    const idAt = format.idMarker == null ? -1 : written.indexOf(format.idMarker);
    return (idAt === -1 ? written : written.slice(0, idAt)).trim();
}
