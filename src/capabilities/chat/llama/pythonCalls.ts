import type { ToolCallFormat } from "../ChatEngine.js";
import { NotationReader, NotNotation } from "./notationReader.js";

/**
 * LFM2's and LFM2.5's calls (Liquid AI): a Python list of calls with keyword arguments between two markers,
 * `<|tool_call_start|>[get_weather(city="Paris", days=2), get_time(zone='CET')]<|tool_call_end|>`. Values are Python
 * literals (strings in either quote, numbers, True/False/None, lists, dicts) or JSON's (`true`, `null`, an object as
 * LFM2.5's template writes a mapping with `tojson`), as llama.cpp's LFM2 parser reads them (common/parsers/lfm2.cpp,
 * python_style_tool_calls with JSON literals allowed). The arguments end at the `)` that closes the call (read here, not
 * searched for: a string may hold one), and the list goes on after a `,` or ends with `]<|tool_call_end|>`.
 */
export const pythonListCallFormat: ToolCallFormat = {
    prefix: "<|tool_call_start|>[", paramsPrefix: "(", suffix: ")", betweenCalls: "", notation: "python",
    list: {separator: ",", end: "]<|tool_call_end|>", item: ""}
};

/**
 * A template of the LFM2 family, detected as llama.cpp detects it: LFM2's tool list between `<|tool_list_start|>` and
 * `<|tool_list_end|>`, or LFM2.5's plain `List of tools: [`.
 */
export function isLfm2Template(template: string): boolean {
    return (template.includes("<|tool_list_start|>") && template.includes("<|tool_list_end|>")) || template.includes("List of tools: [");
}

/**
 * The JSON text of a call's arguments from what the model wrote between its `(` and `)`; null when that is not keyword
 * arguments. A key is any name without whitespace, quotes, brackets, `=` or `,` (a schema's `user-id`, as llama.cpp
 * writes and reads it); a key written again keeps its last value; a number keeps its digits as written where they are
 * JSON's (an id of 20 digits is not rounded).
 */
export function pythonArgumentsJson(written: string): string | null {
    const reader = new Reader(written);
    try {
        const args: Record<string, unknown> = {};
        reader.space();
        while (reader.at < written.length) {
            const key = keyPattern.exec(written.slice(reader.at))?.[0];
            if (key == null)
                return null;
            reader.at += key.length;
            reader.space();
            reader.expect("=");
            args[key] = reader.value();
            reader.space();
            if (reader.at === written.length)
                break;
            reader.expect(",");
            reader.space();
        }
        return jsonText(args);
    } catch (error) {
        if (error instanceof NotNotation)
            return null;
        throw error;
    }
}

/** A keyword argument's name as the reader takes it: no whitespace, quotes, brackets, `=` or `,`. */
const keyPattern = /^[^\s=,()'"[\]{}]+/;

/** Whether a schema's property name can be written as a keyword argument the reader reads back (a forced call's grammar writes no other). */
export function isKeywordName(name: string): boolean {
    return keyPattern.exec(name)?.[0] === name;
}

/**
 * Where a call's keyword arguments end in a text that grows (a call streamed in pieces): the index of the `)` that closes
 * the call, the brackets and strings in between skipped (whether what they hold is Python is read after, by
 * pythonArgumentsJson). Each scan goes on where the last one stopped; null while the call is not closed.
 */
export class PythonArgumentsScan {
    private depth = 0;
    private quote: string | null = null;
    private never = false;

    constructor(private at = 0) {}

    /** The closing `)`'s index; null while it has not come; -1 when it never can (a `]` or `}` that opens nothing: not Python). */
    scan(text: string): number | null {
        if (this.never)
            return -1;
        for (; this.at < text.length; this.at++) {
            const char = text[this.at];
            if (this.quote != null) {
                if (char === "\\") {
                    if (this.at + 1 >= text.length)
                        return null; // the escaped character comes with the next piece
                    this.at++;
                } else if (char === this.quote)
                    this.quote = null;
            } else if (char === "'" || char === '"')
                this.quote = char;
            else if (char === "(" || char === "[" || char === "{")
                this.depth++;
            else if (char === ")" || char === "]" || char === "}") {
                if (this.depth === 0) {
                    if (char === ")")
                        return this.at;
                    this.never = true;
                    return -1;
                }
                this.depth--;
            }
        }
        return null;
    }
}

/** PythonArgumentsScan for a whole text: the `)` closing the arguments that start at `from`, or null (not there, or never). */
export function pythonArgumentsEnd(text: string, from: number): number | null {
    const end = new PythonArgumentsScan(from).scan(text);
    return end === -1 ? null : end;
}

/**
 * Calls as LFM2.5's template writes them (its `render_tool_calls` macro): `<|tool_call_start|>[NAME(KEY=VALUE, ...), ...]<|tool_call_end|>`,
 * a string value between single quotes as it is, a mapping as JSON, another value as Python writes it. For templates of
 * the family that do not write a message's calls (LFM2's, LFM2.5-Instruct's: the model's calls are part of its message
 * there), the calls go into the message's text this way.
 */
export function pythonCallsText(calls: readonly {name: string, arguments: unknown}[]): string {
    const call = ({name, arguments: args}: {name: string, arguments: unknown}) => {
        const entries = args != null && typeof args === "object" && !Array.isArray(args) ? Object.entries(args) : [];
        return `${name}(${entries.map(([key, value]) => `${key}=${argumentText(value)}`).join(", ")})`;
    };
    return `${pythonListCallFormat.prefix}${calls.map(call).join(", ")}${pythonListCallFormat.list!.end}`;
}

function argumentText(value: unknown): string {
    if (typeof value === "string")
        return `'${value}'`;
    if (value != null && typeof value === "object" && !Array.isArray(value))
        return jinjaJson(value);
    return pythonText(value);
}

/** Jinja's `tojson` (as transformers' templates render it: `, ` and `: ` between items). */
function jinjaJson(value: unknown): string {
    if (Array.isArray(value))
        return `[${value.map(jinjaJson).join(", ")}]`;
    if (value != null && typeof value === "object")
        return `{${Object.entries(value).map(([key, item]) => `${JSON.stringify(key)}: ${jinjaJson(item)}`).join(", ")}}`;
    return JSON.stringify(value) ?? "null";
}

/** A value as Jinja's `string` filter writes it (Python's str, and repr inside a list or dict). */
function pythonText(value: unknown, nested = false): string {
    if (value === null || value === undefined)
        return "None";
    if (value === true || value === false)
        return value ? "True" : "False";
    if (typeof value === "string")
        return nested ? pythonRepr(value) : value;
    if (Array.isArray(value))
        return `[${value.map((item) => pythonText(item, true)).join(", ")}]`;
    if (typeof value === "object")
        return `{${Object.entries(value).map(([key, item]) => `${pythonRepr(key)}: ${pythonText(item, true)}`).join(", ")}}`;
    return String(value);
}

/** Python's repr of a string: single quotes unless it holds one and no double quote; backslashes and line breaks escaped. */
function pythonRepr(text: string): string {
    const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
    const escaped = text.replace(/[\\\n\r\t]/g, (char) => ({"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"})[char]!)
        .replaceAll(quote, "\\" + quote);
    return quote + escaped + quote;
}

/** A number as the model wrote it, kept for the JSON text where it is JSON's (an id of 20 digits stays whole). */
class WrittenNumber {
    constructor(readonly text: string) {}
}

/** JSON text of read arguments, their written numbers as written. */
function jsonText(value: unknown): string {
    if (value instanceof WrittenNumber)
        return value.text;
    if (Array.isArray(value))
        return `[${value.map(jsonText).join(",")}]`;
    if (value != null && typeof value === "object")
        return `{${Object.entries(value).map(([key, item]) => `${JSON.stringify(key)}:${jsonText(item)}`).join(",")}}`;
    return JSON.stringify(value);
}

const escapes: Record<string, string> = {n: "\n", t: "\t", r: "\r", b: "\b", f: "\f", "0": "\0", "\\": "\\", "'": "'", '"': '"', "/": "/"};

class Reader extends NotationReader {

    value(): unknown {
        this.space();
        const char = this.text[this.at];
        if (char === "'" || char === '"')
            return this.string(char);
        if (char === "[")
            return this.sequence("[", "]");
        if (char === "(")
            return this.sequence("(", ")");
        if (char === "{")
            return this.dict();
        const literal = /^(?:True|False|None|true|false|null|[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)/.exec(this.text.slice(this.at, this.at + 64))?.[0];
        // A literal runs to a delimiter (`Nonesuch` is not None).
        if (literal == null || /[A-Za-z0-9_.]/.test(this.text[this.at + literal.length] ?? ""))
            throw new NotNotation();
        this.at += literal.length;
        switch (literal) {
            case "True": case "true": return true;
            case "False": case "false": return false;
            case "None": case "null": return null;
        }
        const number = Number(literal);
        if (!Number.isFinite(number))
            throw new NotNotation();
        return /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?$/.test(literal) ? new WrittenNumber(literal) : number;
    }

    private string(quote: string): string {
        let text = "";
        for (let at = this.at + 1; at < this.text.length; at++) {
            const char = this.text[at];
            if (char === quote) {
                this.at = at + 1;
                return text;
            }
            if (char !== "\\") {
                text += char;
                continue;
            }
            const next = this.text[++at];
            if (next == null)
                break;
            const hex = next === "u" ? 4 : next === "x" ? 2 : 0;
            const digits = this.text.slice(at + 1, at + 1 + hex);
            if (hex > 0 && new RegExp(`^[0-9a-fA-F]{${hex}}$`).test(digits)) {
                text += String.fromCharCode(parseInt(digits, 16));
                at += hex;
            } else
                // An escape it does not know (`C:\users`: `\u` without its digits) stays as written, as in Python.
                text += escapes[next] ?? "\\" + next;
        }
        throw new NotNotation();
    }

    private sequence(open: string, close: string): unknown[] {
        this.expect(open);
        this.enter();
        const items: unknown[] = [];
        for (;;) {
            this.space();
            if (this.text[this.at] === close) {
                this.at++;
                this.leave();
                return items;
            }
            items.push(this.value());
            this.space();
            if (this.text[this.at] === ",")
                this.at++;
            else if (this.text[this.at] !== close)
                throw new NotNotation();
        }
    }

    private dict(): Record<string, unknown> {
        this.expect("{");
        this.enter();
        const dict: Record<string, unknown> = {};
        for (;;) {
            this.space();
            if (this.text[this.at] === "}") {
                this.at++;
                this.leave();
                return dict;
            }
            const key = this.value();
            if (typeof key !== "string")
                throw new NotNotation();
            this.space();
            this.expect(":");
            dict[key] = this.value();
            this.space();
            if (this.text[this.at] === ",")
                this.at++;
            else if (this.text[this.at] !== "}")
                throw new NotNotation();
        }
    }
}
