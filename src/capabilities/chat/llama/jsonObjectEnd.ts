import type { ToolCallFormat } from "../ChatEngine.js";

/**
 * Where the JSON object that starts at `from` (after whitespace) ends: the index just after its closing brace; null when
 * the text there is not the start of an object or the object is not closed yet. For call formats whose arguments end a
 * call (Mistral's `[TOOL_CALLS]NAME[ARGS]{...}`: no closing markup, the next call or the end of the answer follows). Only
 * the brackets are matched (strings and their escapes skipped): whether the object is valid JSON is checked after.
 */
export function jsonObjectEnd(text: string, from: number): number | null {
    return new JsonObjectScan(from).scan(text);
}

/** jsonObjectEnd over a text that grows (a call streamed in pieces): each scan goes on where the last one stopped. */
export class JsonObjectScan {
    private depth = 0;
    private inString = false;
    private started = false;
    private failed = false;

    constructor(private at = 0) {}

    /** The end of the object in `text` (which starts with what the earlier scans saw); null while it is not closed or not an object. */
    scan(text: string): number | null {
        if (this.failed)
            return null;
        if (!this.started) {
            while (this.at < text.length && /\s/.test(text[this.at]))
                this.at++;
            if (this.at >= text.length)
                return null;
            if (text[this.at] !== "{") {
                this.failed = true;
                return null;
            }
            this.started = true;
        }
        for (; this.at < text.length; this.at++) {
            const char = text[this.at];
            if (this.inString) {
                if (char === "\\") {
                    if (this.at + 1 >= text.length)
                        return null; // the escaped character comes with the next piece
                    this.at++;
                } else if (char === '"')
                    this.inString = false;
            } else if (char === '"')
                this.inString = true;
            else if (char === "{" || char === "[")
                this.depth++;
            else if (char === "}" || char === "]") {
                this.depth--;
                if (this.depth === 0)
                    return ++this.at;
            }
        }
        return null;
    }
}

/**
 * A format whose call is a JSON object itself, its arguments a value in it, with no markup after (Llama 3.1-3.3's
 * `{"name": ..., "parameters": {...}}`): the call ends with its arguments, and the object's own `}` follows.
 */
export function isObjectCall(format: ToolCallFormat): boolean {
    return format.suffix === "" && format.prefix.trimStart().startsWith("{");
}

/**
 * After a call of such a format, from `at`: past the object's closing brace and what Llama 3.x writes between calls
 * (whitespace, `;`); `at` itself for other formats or when the brace is not there.
 */
export function afterObjectCall(text: string, at: number, format: ToolCallFormat): number {
    if (!isObjectCall(format))
        return at;
    const close = /^\s*\}[\s;]*/.exec(text.slice(at));
    return close == null ? at : at + close[0].length;
}
