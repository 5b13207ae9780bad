/**
 * Gemma 4's call arguments: `call:NAME{key:value,...}`, its own notation rather than JSON (as its template's
 * `format_argument` writes them and the model was trained): strings between `<|"|>` marks (no escapes), numbers,
 * `true`/`false`/`null`, lists `[a,b]` and maps `{key:value}` with bare keys. Read as llama.cpp's gemma4 parser reads
 * them (`common/parsers/gemma4.cpp`): whitespace allowed after `{`, `[`, `,` and `:` and before a closing bracket.
 */
import type { ToolCallFormat } from "../ChatEngine.js";
import { NotationReader, NotNotation } from "./notationReader.js";

const quote = '<|"|>';

/** Gemma 4's calls: `<|tool_call>call:NAME{key:value,...}<tool_call|>`, one after another. */
export const gemma4CallFormat: ToolCallFormat = {prefix: "<|tool_call>call:", paramsPrefix: "{", suffix: "}<tool_call|>", betweenCalls: "", notation: "gemma4"};

/** A template that writes calls as Gemma 4's does. */
export function isGemma4Template(template: string): boolean {
    return template.includes("<|tool_call>call:") && template.includes("<tool_call|>") && template.includes(quote);
}

/** The JSON text of a call's arguments, from what the model wrote between `{` and `}` of the call; null when it is not that notation. */
export function gemma4ArgumentsJson(written: string): string | null {
    const reader = new Reader("{" + written + "}");
    try {
        const value = reader.map();
        reader.space();
        return reader.at === reader.text.length ? JSON.stringify(value) : null;
    } catch (error) {
        if (error instanceof NotNotation)
            return null;
        throw error;
    }
}

class Reader extends NotationReader {

    value(): unknown {
        this.space();
        if (this.text.startsWith(quote, this.at)) {
            const end = this.text.indexOf(quote, this.at + quote.length);
            if (end === -1)
                throw new NotNotation();
            const text = this.text.slice(this.at + quote.length, end);
            this.at = end + quote.length;
            return text;
        }
        const char = this.text[this.at];
        if (char === "{")
            return this.map();
        if (char === "[")
            return this.list();
        const literal = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(this.text.slice(this.at, this.at + 64))?.[0];
        if (literal == null)
            throw new NotNotation();
        this.at += literal.length;
        return JSON.parse(literal);
    }

    map(): Record<string, unknown> {
        this.expect("{");
        this.enter();
        this.space();
        const map: Record<string, unknown> = {};
        if (this.text[this.at] === "}") {
            this.at++;
            this.leave();
            return map;
        }
        for (;;) {
            this.space();
            const keyEnd = this.text.indexOf(":", this.at);
            const key = keyEnd === -1 ? "" : this.text.slice(this.at, keyEnd).trim();
            // A bare key (`escape_keys=False`), or one in quote marks.
            const name = key.startsWith(quote) && key.endsWith(quote) && key.length >= 2 * quote.length ? key.slice(quote.length, -quote.length) : key;
            if (name === "" || /[{}[\],]/.test(key.replaceAll(quote, "")))
                throw new NotNotation();
            this.at = keyEnd + 1;
            map[name] = this.value();
            this.space();
            if (this.text[this.at] === ",") {
                this.at++;
                continue;
            }
            this.expect("}");
            this.leave();
            return map;
        }
    }

    list(): unknown[] {
        this.expect("[");
        this.enter();
        this.space();
        const list: unknown[] = [];
        if (this.text[this.at] === "]") {
            this.at++;
            this.leave();
            return list;
        }
        for (;;) {
            list.push(this.value());
            this.space();
            if (this.text[this.at] === ",") {
                this.at++;
                continue;
            }
            this.expect("]");
            this.leave();
            return list;
        }
    }
}
