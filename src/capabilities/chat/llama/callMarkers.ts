import type { ToolCallFormat } from "../ChatEngine.js";
import { isObjectCall } from "./jsonObjectEnd.js";
import { findPiece, pieceAt } from "./parameterMarkup.js";

/**
 * Where a call starts in generated text, and where its name ends: the format's prefix and params prefix as node-llama-cpp
 * read them from the template; for a format whose call is a JSON object (Llama 3.1-3.3's `{"name": NAME, "parameters":
 * {...}}`), the same JSON as a model writes it: any whitespace between its tokens (`{"name":"f","parameters":{...}}`, one
 * key per line) and OpenAI's `"type": "function",` before the name (what Llama 3.2 often writes), as llama.cpp's parser
 * reads them (common/chat-peg-parser.cpp, build_json_tools_flat_keys). parseToolCalls and ToolCallStream both read
 * through these, so the streamed and the whole answer agree.
 */
export interface CallStart {
    /** The first start at or after `from`. */
    find(text: string, from: number): {start: number, end: number} | null;
    /** The end of a start at `at`, or null when none starts there. */
    at(text: string, at: number): number | null;
    /** How many characters at the end of `text` could begin a start (0: none); a whole start is not counted. */
    partialAtEnd(text: string): number;
}

export function callStartOf(format: ToolCallFormat): CallStart {
    return isObjectCall(format) ? jsonStart(format.prefix, true) : jsonItems(format) ? jsonStart(format.prefix, false) : literalStart(format.prefix);
}

/** Where the first call starts: the prefix, or where the format allows it, its short form (`format.firstStart`), whichever comes first. */
export function firstCallStartOf(format: ToolCallFormat): CallStart {
    const start = callStartOf(format);
    if (format.firstStart == null)
        return start;
    const short = literalStart(format.firstStart);
    return {
        find(text, from) {
            const whole = start.find(text, from), alone = short.find(text, from);
            return whole == null ? alone : alone == null || whole.start <= alone.start ? whole : alone;
        },
        at: (text, at) => start.at(text, at) ?? short.at(text, at),
        partialAtEnd: (text) => Math.max(start.partialAtEnd(text), short.partialAtEnd(text))
    };
}

/** Whether the call start found at `at` is the first call's short form (`format.firstStart`), not the whole prefix. */
export function isShortStart(text: string, at: number, format: ToolCallFormat, start: CallStart = callStartOf(format)): boolean {
    return format.firstStart != null && start.at(text, at) == null && text.startsWith(format.firstStart, at);
}

/** Where the next call of a list starts after its separator (`format.list.item`; a JSON list's `{"name": "` read as JSON). */
export function listItemStartOf(format: ToolCallFormat): CallStart {
    const item = format.list?.item ?? "";
    if (jsonItems(format))
        return jsonStart(item, false);
    if (item.trim() === "")
        return literalStart(item);
    // Markup (Kimi's `<|tool_call_begin|>`, MiniMax's `>\n<invoke name="`): whitespace around and between its tags as the model writes it.
    return {
        find: (text, from) => literalStart(item).find(text, from),
        at: (text, at) => {
            const end = pieceAt(text, at, item);
            return typeof end === "number" ? end : null;
        },
        // (A start the text ends inside of begins within the item's length and some whitespace from the end.)
        partialAtEnd: (text) => {
            for (let start = Math.max(0, text.length - item.length - maxSpace); start < text.length; start++)
                if (pieceAt(text, start, item) === "partial")
                    return text.length - start;
            return 0;
        }
    };
}

/** The calls are JSON objects in a list (Nemotron-Nano-v2's `<TOOLCALL>[{"name": ...}]`): their markup is read with any whitespace between JSON's tokens. */
function jsonItems(format: ToolCallFormat): boolean {
    return format.list != null && format.list.item.trimStart().startsWith("{");
}

/**
 * Where the call's name ends and its arguments start, searching from `from`; `never` when no text that follows can end
 * it: in a JSON object call the name is a JSON string (no tool's name has a quote), so it ends at its first quote, where
 * the params prefix must follow (`{"name": "Bob", "age": 42}` is no call). Null: not yet (for other formats, until
 * their params prefix comes).
 */
export function findNameEnd(text: string, format: ToolCallFormat, from: number): {start: number, end: number} | "never" | null {
    // A name the template ends with whitespace alone before markup (Ling's `<tool_call>NAME\n<arg_key>`): also where the
    // markup starts right after it, as llama.cpp reads Ling's calls (a name has no `<`).
    if (format.parameters != null && format.paramsPrefix.trim() === "") {
        const end = /\s+|(?=<)/g;
        // Not the whitespace the name starts after (` NAME\n`).
        end.lastIndex = from + (/^\s*/.exec(text.slice(from, from + 64))?.[0].length ?? 0);
        const found = end.exec(text);
        // Whitespace at the text's end may go on in the next piece.
        return found == null || (found[0] !== "" && found.index + found[0].length === text.length) ? null : {start: found.index, end: found.index + found[0].length};
    }
    if (!isObjectCall(format))
        return findPiece(text, format.paramsPrefix, from, format.parameters != null || format.list != null);
    const quote = text.indexOf('"', from);
    if (quote < 0)
        return null;
    const end = matchPiece(text, quote, jsonPiece(format.paramsPrefix, false));
    return typeof end === "number" ? {start: quote, end} : end == null ? "never" : null;
}

function literalStart(prefix: string): CallStart {
    return {
        find(text, from) {
            const start = text.indexOf(prefix, from);
            return start < 0 ? null : {start, end: start + prefix.length};
        },
        at: (text, at) => text.startsWith(prefix, at) ? at + prefix.length : null,
        partialAtEnd: (text) => partialPrefixAtEnd(text, prefix)
    };
}

/** The length of the longest proper start of `prefix` that ends `text` (0: none). */
export function partialPrefixAtEnd(text: string, prefix: string): number {
    for (let length = Math.min(text.length, prefix.length - 1); length > 0; length--)
        if (prefix.startsWith(text.slice(text.length - length)))
            return length;
    return 0;
}

/** A piece of JSON markup: its tokens in order, optional whitespace between them, and an optional group after the first. */
type JsonPiece = {tokens: string[], optional: string[]};

/**
 * The most whitespace read between two tokens of a call's JSON markup: more is not a call's markup (a model writing a
 * line break and indentation, or a space, has a few); it bounds the text held back while a call may be starting, and
 * the scan of it, on an answer of JSON with long runs of whitespace.
 */
const maxSpace = 64;

function jsonStart(markup: string, typeField: boolean): CallStart {
    return pieceStart(jsonPiece(markup, typeField));
}

/**
 * `{"name": "` as its tokens `{`, `"name"`, `:`, `"`; `", "parameters": ` as `"`, `,`, `"parameters"`, `:`. With
 * `typeField`, `"type": "function",` may follow a leading `{` (unless the markup's first key is that already).
 */
const jsonPieces = new Map<string, JsonPiece>();
function jsonPiece(markup: string, typeField: boolean): JsonPiece {
    const key = `${typeField}:${markup}`;
    let piece = jsonPieces.get(key);
    if (piece == null)
        jsonPieces.set(key, piece = readJsonPiece(markup, typeField));
    return piece;
}

function readJsonPiece(markup: string, typeField: boolean): JsonPiece {
    const tokens = markup.split(/\s+/).flatMap((run) => run.split(/([{}[\]:,])/)).filter((token) => token !== "");
    const optional = typeField && tokens[0] === "{" && tokens[1] !== '"type"' ? ['"type"', ":", '"function"', ","] : [];
    return {tokens, optional};
}

/** A match of `piece` from `at`: its end, "partial" when the text ends inside it, null when the text there is not it. */
function matchPiece(text: string, at: number, piece: JsonPiece): number | "partial" | null {
    const [first, ...rest] = piece.tokens;
    const afterFirst = matchTokens(text, at, [first], false);
    if (afterFirst == null || afterFirst === "partial")
        return afterFirst;
    let partial = false;
    for (const tokens of piece.optional.length === 0 ? [rest] : [[...piece.optional, ...rest], rest]) {
        const end = matchTokens(text, afterFirst, tokens, true);
        if (typeof end === "number")
            return end;
        partial ||= end === "partial";
    }
    return partial ? "partial" : null;
}

/** `tokens` in order from `at`, whitespace before each (but the first unless `leadingSpace`). */
function matchTokens(text: string, at: number, tokens: readonly string[], leadingSpace: boolean): number | "partial" | null {
    for (let i = 0; i < tokens.length; i++) {
        if (i > 0 || leadingSpace) {
            const spaceStart = at;
            while (at < text.length && /\s/.test(text[at]))
                if (++at - spaceStart > maxSpace)
                    return null;
        }
        const token = tokens[i];
        const available = text.slice(at, at + token.length);
        if (available.length < token.length)
            return token.startsWith(available) ? "partial" : null;
        if (available !== token)
            return null;
        at += token.length;
    }
    return at;
}

function pieceStart(piece: JsonPiece): CallStart {
    const lead = piece.tokens[0];
    return {
        find(text, from) {
            for (let start = text.indexOf(lead, from); start >= 0; start = text.indexOf(lead, start + 1)) {
                const end = matchPiece(text, start, piece);
                if (typeof end === "number")
                    return {start, end};
            }
            return null;
        },
        at(text, at) {
            const end = matchPiece(text, at, piece);
            return typeof end === "number" ? end : null;
        },
        partialAtEnd(text) {
            // The earliest start the text ends inside of: the longest.
            for (let start = text.indexOf(lead[0]); start >= 0; start = text.indexOf(lead[0], start + 1))
                if (matchPiece(text, start, piece) === "partial")
                    return text.length - start;
            return 0;
        }
    };
}
