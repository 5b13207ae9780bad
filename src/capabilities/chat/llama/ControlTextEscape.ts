import crypto from "node:crypto";
import { LlamaText, SpecialTokensText } from "node-llama-cpp";
import type { SpecialTokenTexts } from "./SpecialTokenTexts.js";

/** Placeholder ids of one rendering -> the text each stands for. */
export type EscapeSlots = Map<number, string>;

/**
 * Client text the template renders outside message content (tool descriptions and parameters, tool-call names and
 * arguments, `chat_template_kwargs`) kept plain text, as message content is: node-llama-cpp tokenizes everything
 * the template writes around messages with special tokens, so a tool description holding `<|im_start|>` would
 * become that control token (100 of them: 101 more tokens). A string (or object key) holding a control token's
 * text goes into the template as a placeholder, `<tag><id>\u0001<tag>`; in the rendered text each placeholder
 * becomes plain text again, JSON-escaped as many times as the template encoded it (`tojson` writes the `\u0001`
 * as `\\u0001`, twice as `\\\\u0001`...). Strings without control-token text go in unchanged, so the template
 * sees (and can test) exactly what the client sent.
 */
export class ControlTextEscape {
    private readonly tag = "esc" + crypto.randomBytes(6).toString("hex");
    private readonly placeholder = new RegExp(`${this.tag}(\\d+)(\u0001|\\\\+u0001)${this.tag}`, "g");
    private nextId = 0;

    constructor(private readonly specials: SpecialTokenTexts) {}

    /** `value` with each string and key that holds control-token text replaced by a placeholder (recorded in `slots`); `value` itself when none does. */
    escape<T>(value: T, slots: EscapeSlots): T {
        if (typeof value === "string")
            return (this.specials.hasControlText(value) ? this.slot(value, slots) : value) as T;
        if (value === null || typeof value !== "object")
            return value;
        if (Array.isArray(value)) {
            const items = value.map((item) => this.escape(item, slots));
            return (items.some((item, index) => item !== value[index]) ? items : value) as T;
        }
        let changed = false;
        const entries = Object.entries(value).map(([key, item]) => {
            const entry = [this.escape(key, slots), this.escape(item, slots)];
            changed ||= entry[0] !== key || entry[1] !== item;
            return entry;
        });
        return (changed ? Object.fromEntries(entries) : value) as T;
    }

    /** `rendered` with every placeholder of `slots` back as plain text (never tokenized as special tokens). */
    restore(rendered: LlamaText, ...slots: readonly EscapeSlots[]): LlamaText {
        if (slots.every((slot) => slot.size === 0))
            return rendered;
        const values: unknown[] = [];
        for (const value of rendered.values) {
            const text = value instanceof SpecialTokensText ? value.value : typeof value === "string" ? value : null;
            if (text == null) {
                values.push(value);
                continue;
            }
            let last = 0;
            for (const match of text.matchAll(this.placeholder)) {
                const original = slots.find((slot) => slot.has(Number(match[1])))?.get(Number(match[1]));
                const level = escapeLevel(match[2]);
                if (original == null || level == null)
                    continue;
                values.push(typed(text.slice(last, match.index), value), jsonEscaped(original, level));
                last = match.index + match[0].length;
            }
            values.push(typed(text.slice(last), value));
        }
        return LlamaText(values as never);
    }

    private slot(text: string, slots: EscapeSlots): string {
        const id = this.nextId++;
        slots.set(id, text);
        return `${this.tag}${id}\u0001${this.tag}`;
    }
}

/** How many times the placeholder's `\u0001` was JSON-encoded: 0 (as is), 1 (`\u0001`), 2 (`\\u0001`), 3 (`\\\\u0001`)... */
function escapeLevel(marker: string): number | null {
    if (marker === "\u0001")
        return 0;
    const backslashes = marker.length - "u0001".length;
    const level = Math.log2(backslashes) + 1;
    return Number.isInteger(level) ? level : null;
}

function jsonEscaped(text: string, level: number): string {
    let escaped = text;
    for (let step = 0; step < level; step++)
        escaped = JSON.stringify(escaped).slice(1, -1);
    return escaped;
}

/** A piece of a rendered value, of that value's kind (template text stays special-token text). */
function typed(text: string, of: unknown): unknown {
    return of instanceof SpecialTokensText ? new SpecialTokensText(text) : text;
}
