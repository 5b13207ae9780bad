import type { ParameterMarkup } from "../ChatEngine.js";

/**
 * Tool calls whose arguments the template writes one by one in markup, not as one JSON object: Qwen3-Coder's, Qwen3.5's
 * and Nemotron-3's `<parameter=KEY>\nVALUE\n</parameter>`, GLM-4.6's and GLM-4.7's `<arg_key>KEY</arg_key>\n<arg_value>VALUE</arg_value>`.
 * node-llama-cpp detects such a template's call format as one argument it names `params` holding the whole arguments as
 * JSON, which is neither what the model was trained to write nor how the template renders a past call; llama.cpp has a
 * parser per such format. Here the markup is read from the template itself: a probe call with two string arguments
 * and one with none, rendered as the template renders past calls, give the text between the pieces (see
 * {@link deriveParameterMarkup}); a call is then `prefix NAME nameEnd (keyStart KEY keyEnd VALUE valueEnd)* callEnd`, where
 * node-llama-cpp's `paramsPrefix` and `suffix` become `nameEnd` and `callEnd`.
 */

/** The probe's names and values: plain words no template changes and no other text of a prompt holds. */
export const parameterProbe = {name: "probefnqx", keys: ["probekeyaqx", "probekeybqx"], values: ["probevalaqx", "probevalbqx"]} as const;

/**
 * The markup, from the template's renderings of the probe call: `two` with both keys and values, `none` with no
 * arguments; `prefix` and `suffix` as node-llama-cpp detected them (the text before the name, and after the last value).
 * Null when the renderings do not have the shape (ChatPromptRenderer then keeps node-llama-cpp's format).
 */
export function deriveParameterMarkup(two: string, none: string, prefix: string, suffix: string):
    {nameEnd: string, callEnd: string, markup: ParameterMarkup} | null {
    const {name, keys, values} = parameterProbe;
    // The call, not the function's definition among the tools: the name right after the prefix.
    const call = two.indexOf(prefix + name);
    if (call < 0)
        return null;
    const at = [keys[0], values[0], keys[1], values[1]].reduce<number[]>((positions, text) => {
        const position = two.indexOf(text, positions.at(-1)! + 1);
        return [...positions, position < 0 ? Infinity : position];
    }, [call + prefix.length]);
    if (at.some((position) => !Number.isFinite(position)))
        return null;
    const between = (from: number, fromText: string, to: number) => two.slice(from + fromText.length, to);
    const nameToKey = between(at[0], name, at[1]);
    const keyEnd = between(at[1], keys[0], at[2]);
    const valueToKey = between(at[2], values[0], at[3]);
    if (between(at[3], keys[1], at[4]) !== keyEnd || !two.startsWith(suffix, at[4] + values[1].length))
        return null;
    // valueToKey is valueEnd + keyStart and suffix is valueEnd + callEnd: valueEnd is the longest text they start with
    // that leaves a keyStart nameToKey also ends with (nameToKey = nameEnd + keyStart).
    for (let length = Math.min(valueToKey.length, suffix.length); length >= 0; length--) {
        const valueEnd = valueToKey.slice(0, length);
        const keyStart = valueToKey.slice(length);
        if (!suffix.startsWith(valueEnd) || keyStart === "" || !nameToKey.endsWith(keyStart))
            continue;
        const nameEnd = nameToKey.slice(0, nameToKey.length - keyStart.length);
        const callEnd = suffix.slice(valueEnd.length);
        // The call without arguments must be `prefix NAME nameEnd callEnd`, as the template writes it (whitespace aside:
        // DeepSeek-V4's writes a line more there).
        if (!withoutSpace(none).includes(withoutSpace(prefix + name + nameEnd + callEnd)) || nameEnd + callEnd === "")
            continue;
        return {nameEnd, callEnd, markup: {keyStart, keyEnd, valueEnd}};
    }
    return null;
}

export function withoutSpace(text: string) {
    return text.replace(/\s+/g, "");
}

/**
 * Where a piece of a call's markup is in `text` from `from` on: the exact text, or (`flexible`, the formats with
 * arguments in markup) the same tags with any whitespace around and between them, as real models write them (Qwen3-Coder
 * leaves out a line break before `</parameter>`, GLM-4.6 one between `</arg_key>` and `<arg_value>`), except next to a
 * value (`value`: the value comes `before` or `after` the piece), where at most one line break is the piece's and the
 * value keeps the rest (an indented line, a file's last line break). A piece of whitespace alone (Ling's end of a name,
 * `\n`) is some whitespace. The tags are matched by a pattern without whitespace around it, whitespace walked over by
 * hand: no pattern backtracks over a run of blank lines.
 */
export function findPiece(text: string, piece: string, from: number, flexible: boolean, value: "before" | "after" | null = null): {start: number, end: number} | null {
    if (!flexible) {
        const start = text.indexOf(piece, from);
        return start < 0 ? null : {start, end: start + piece.length};
    }
    const pattern = piecePattern(piece);
    // A piece of whitespace alone ends what comes before it: not the whitespace the search starts on (` name\n`).
    let first = from;
    while (piece.trim() === "" && first < text.length && /\s/.test(text[first]))
        first++;
    pattern.lastIndex = first;
    const match = pattern.exec(text);
    if (match == null)
        return null;
    let start = match.index, end = match.index + match[0].length;
    if (piece.trim() === "")
        return {start, end};
    // Next to a value, a line break is the piece's only where the piece has whitespace on that side (Qwen3-Coder's
    // `>\n` and `\n</parameter>`; GLM's `<arg_value>` and `</arg_value>` have none: the value keeps its line breaks).
    if (value === "before")
        start -= !/^\s/.test(piece) ? 0 : text[start - 1] === "\n" && start - 1 >= from ? (text[start - 2] === "\r" && start - 2 >= from ? 2 : 1) : 0;
    else
        while (start > from && /\s/.test(text[start - 1]))
            start--;
    if (value === "after")
        end += !/\s$/.test(piece) ? 0 : text[end] === "\n" ? 1 : text[end] === "\r" && text[end + 1] === "\n" ? 2 : 0;
    else
        while (end < text.length && /\s/.test(text[end]))
            end++;
    return {start, end};
}

const piecePatterns = new Map<string, RegExp>();
/** The tags of a piece, whitespace between them optional (between two tags too: `</arg_key><arg_value>`). */
function piecePattern(piece: string): RegExp {
    let pattern = piecePatterns.get(piece);
    if (pattern == null) {
        const runs = piece.replace(/>(?=<)/g, ">\u0000").split(/\s+|\u0000/).filter((run) => run !== "")
            .map((run) => run.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
        piecePatterns.set(piece, pattern = new RegExp(runs.length === 0 ? "\\s+" : runs.join("\\s*"), "g"));
    }
    return pattern;
}

/** A key as a model writes one: a name, not markup, quotes or lines (a misread piece of markup is not taken for a key). */
/** A number for a probe call's first argument (deriveJsonKeyEnd): digits no template writes otherwise. */
export const probeNumber = 73914;

/**
 * The key end a template writes before a value that is not a string, where it is not `markup.keyEnd` (DeepSeek-V3.2's
 * and V4's ` string="false">` for ` string="true">`), from its rendering `typed` of the probe call with `probeNumber`
 * as its first argument; null where it is the same.
 */
export function deriveJsonKeyEnd(typed: string, markup: ParameterMarkup): string | null {
    const key = markup.keyStart + parameterProbe.keys[0];
    const keyAt = typed.indexOf(key);
    const valueAt = keyAt < 0 ? -1 : typed.indexOf(String(probeNumber), keyAt);
    const keyEnd = valueAt < 0 ? null : typed.slice(keyAt + key.length, valueAt);
    return keyEnd != null && keyEnd !== markup.keyEnd && keyEnd.trim() !== "" ? keyEnd : null;
}

/**
 * The block a template writes its calls in, where node-llama-cpp's detected prefix begins inside the block's opening tag
 * (MiniMax-M2's `>\n<invoke name="` in `<minimax:tool_call>\n<invoke name="...`, DeepSeek-V3.2's and V4's
 * `<｜DSML｜function_calls>`/`<｜DSML｜tool_calls>`), from the rendering `two` of the probe call (deriveParameterMarkup's):
 * the opening tag's start before the prefix (`opener`, `<minimax:tool_call`), and what follows the call's `suffix` up to
 * the block's closing tag (`end`, `>\n</minimax:tool_call>`; Tencent Hy3's tags end in `:opensource>`, which the prefix
 * and that end then start with). The block's calls are then a list: the first starts with
 * `opener + prefix`, each next one with the prefix alone (the `>` closing the last call's tag, the next call's tag). Null
 * for a prefix that starts a tag of its own, or a rendering without that shape. Without this the opening tag's start
 * stayed in the answer's content.
 */
export function deriveCallBlock(two: string, prefix: string, suffix: string): {opener: string, end: string} | null {
    // The rest of the opening tag the prefix starts with: `>`, or more of the tag's name and `>` (Tencent Hy3's
    // `:opensource>` in `<tool_calls:opensource>`).
    const tagRest = /^[^\s<>/]*>/.exec(prefix)?.[0];
    if (tagRest == null)
        return null;
    const call = two.indexOf(prefix + parameterProbe.name);
    const tagStart = call < 0 ? -1 : two.lastIndexOf("<", call);
    const opener = tagStart < 0 ? "" : two.slice(tagStart, call);
    if (!/^<[^\s<>/]+$/.test(opener))
        return null;
    const callEnd = two.indexOf(suffix, call);
    const closing = `</${opener.slice(1)}${tagRest}`;
    const closed = callEnd < 0 ? -1 : two.indexOf(closing, callEnd + suffix.length);
    const end = closed < 0 ? "" : two.slice(callEnd + suffix.length, closed + closing.length);
    // Between the call's end and the block's closing tag: the rest of the call's own closing tag, and whitespace.
    return closed >= 0 && /^(?:[^\s<>/]*>)?\s*$/.test(end.slice(0, end.length - closing.length)) ? {opener, end} : null;
}

const keyPattern = /^[^\s<>"'=/]+$/;

/**
 * A call's arguments as a JSON object text, from the markup between its name and its end (`body`); null when the body
 * is not that markup. A value is read by the function's schema ({@link typedValue}). `cut`: the generation stopped
 * inside the call; the pairs written whole are kept.
 */
export function argumentsFromMarkup(body: string, markup: ParameterMarkup, schema: Record<string, unknown> | undefined, cut = false,
    callEnd = ""): string | null {
    const args: Record<string, unknown> = {};
    const failed = () => cut ? JSON.stringify(args) : null;
    // Where the body's text ends (whitespace after it is no pair's).
    const contentEnd = body.trimEnd().length;
    let at = 0;
    for (;;) {
        if (at >= contentEnd)
            break;
        const keyStart = findPiece(body, markup.keyStart, at, true);
        if (keyStart == null || body.slice(at, keyStart.start).trim() !== "")
            return failed();
        const textEnd = findPiece(body, markup.keyEnd, keyStart.end, true, "after");
        const jsonEnd = markup.jsonKeyEnd == null ? null : findPiece(body, markup.jsonKeyEnd, keyStart.end, true, "after");
        const json = jsonEnd != null && (textEnd == null || jsonEnd.start < textEnd.start);
        const keyEnd = json ? jsonEnd : textEnd;
        const valueEnd = keyEnd == null ? null : findValueEnd(body, contentEnd, markup, keyEnd.end, cut ? callEnd : null);
        if (keyEnd == null || valueEnd == null)
            return failed();
        const key = body.slice(keyStart.end, keyEnd.start);
        if (!keyPattern.test(key))
            return failed();
        const value = body.slice(keyEnd.end, valueEnd.start);
        args[key] = json ? jsonValue(value, propertySchema(schema, key)) : typedValue(value, propertySchema(schema, key));
        at = valueEnd.end;
    }
    return JSON.stringify(args);
}

/**
 * The end of the value from `from` on: the first value end followed by another key or by nothing, so that markup
 * inside a value (an XML file's `<parameter>` lines) does not end it. `cutCallEnd` (the generation stopped inside the
 * call, whose end is this): the last value end, when only the start of a key or of the call's end follows it, ends it
 * too (the pair was written whole, the generation stopped in the tags after it). `contentEnd`: where the body's text ends.
 */
function findValueEnd(body: string, contentEnd: number, markup: ParameterMarkup, from: number, cutCallEnd: string | null): {start: number, end: number} | null {
    const key = keyStartAt(markup.keyStart);
    let previous: {start: number, end: number} | null = null;
    for (let at = from; ;) {
        const end = findPiece(body, markup.valueEnd, at, true, "before");
        if (end == null) {
            if (cutCallEnd == null || previous == null)
                return null;
            const rest = withoutSpace(body.slice(previous.end));
            return withoutSpace(cutCallEnd).startsWith(rest) || withoutSpace(markup.keyStart).startsWith(rest) ? previous : null;
        }
        key.lastIndex = end.end;
        if (end.end >= contentEnd || key.test(body))
            return end;
        previous = end;
        // On from the end of this one's tags (its whitespace may be the next one's).
        at = end.end;
        while (at > end.start + 1 && /\s/.test(body[at - 1]))
            at--;
    }
}

/**
 * The end of `piece` written at `at` (whitespace before it and between its tags allowed, as findPiece's flexible match
 * takes them), `partial` when the text ends inside it, null when what is there is not it.
 */
export function pieceAt(text: string, at: number, piece: string): number | "partial" | null {
    const pattern = keyStartAt(piece);
    pattern.lastIndex = at;
    if (pattern.test(text))
        return pattern.lastIndex;
    return withoutSpace(piece).startsWith(withoutSpace(text.slice(at))) ? "partial" : null;
}

const keyStartPatterns = new Map<string, RegExp>();
/** A key's start right where a search is (sticky), whitespace before it allowed. */
function keyStartAt(keyStart: string): RegExp {
    let pattern = keyStartPatterns.get(keyStart);
    if (pattern == null)
        keyStartPatterns.set(keyStart, pattern = new RegExp(`\\s*(?:${piecePattern(keyStart).source})`, "y"));
    return pattern;
}

function propertySchema(schema: Record<string, unknown> | undefined, key: string): Record<string, unknown> | undefined {
    const properties = schema?.properties;
    const property = properties != null && typeof properties === "object" ? (properties as Record<string, unknown>)[key] : undefined;
    return property != null && typeof property === "object" ? property as Record<string, unknown> : undefined;
}

const pythonLiterals: Record<string, unknown> = {True: true, False: false, None: null};

/**
 * How a property's value is written in markup: `text` (a string: its text as written), `json` (no string allowed: its
 * JSON, Python's literals too), `mixed` (a string or something else, e.g. `["string", "null"]` or pydantic's
 * `anyOf: [{type: string}, {type: null}]`: a literal of one of the other types, else the text). `type` lists, string
 * enums and `anyOf`/`oneOf` branches are looked through. The forced-call grammar asks the same (toolCallGrammar.ts).
 */
export function valueKind(schema: Record<string, unknown> | undefined): "text" | "json" | "mixed" {
    const types = schemaTypes(schema);
    if (types == null)
        return "mixed";
    if (!types.has("string"))
        return "json";
    return types.size === 1 ? "text" : "mixed";
}

/** The types a schema allows (null: any). */
function schemaTypes(schema: Record<string, unknown> | undefined): Set<string> | null {
    if (schema == null)
        return null;
    const branches = [schema.anyOf, schema.oneOf].find(Array.isArray) as Record<string, unknown>[] | undefined;
    if (branches != null) {
        const types = new Set<string>();
        for (const branch of branches) {
            const inner = schemaTypes(branch);
            if (inner == null)
                return null;
            inner.forEach((type) => types.add(type));
        }
        return types;
    }
    if (Array.isArray(schema.enum))
        return new Set(schema.enum.map((value) => value === null ? "null" : typeof value === "string" ? "string" : "other"));
    if (typeof schema.type === "string")
        return new Set([schema.type]);
    if (Array.isArray(schema.type))
        return new Set(schema.type.filter((type): type is string => typeof type === "string"));
    return null;
}

/** A value its markup says is not a string (`jsonKeyEnd`): its JSON (Python's literals too), else as its schema says. */
function jsonValue(text: string, schema: Record<string, unknown> | undefined): unknown {
    const trimmed = text.trim();
    if (Object.hasOwn(pythonLiterals, trimmed))
        return pythonLiterals[trimmed];
    try {
        return JSON.parse(trimmed);
    } catch {
        return typedValue(text, schema);
    }
}

/** A value as `valueKind` says: the text, or its JSON; for `mixed`, JSON only when it is not a string's text. */
function typedValue(text: string, schema: Record<string, unknown> | undefined): unknown {
    const kind = valueKind(schema);
    if (kind === "text")
        return text;
    const trimmed = text.trim();
    if (Object.hasOwn(pythonLiterals, trimmed))
        return pythonLiterals[trimmed];
    let value: unknown;
    try {
        value = JSON.parse(trimmed);
    } catch {
        return text;
    }
    // A string property's text that happens to be JSON (a zip code, "true") stays text, unless the schema allows the type it parses as.
    if (kind === "mixed" && schema != null && typeof value !== "string") {
        const types = schemaTypes(schema)!;
        const type = value === null ? "null" : Array.isArray(value) ? "array" : typeof value === "object" ? "object"
            : typeof value === "boolean" ? "boolean" : Number.isInteger(value) ? "integer" : "number";
        if (!types.has(type) && !(type === "integer" && types.has("number")))
            return text;
    }
    return typeof value === "string" && kind === "mixed" ? text : value;
}
