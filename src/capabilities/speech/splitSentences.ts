import { splitAtLength } from "./splitAtLength.js";

/** Sentence ends that need a following space (or the end) to count: "3.14" and "e.g.x" are not ends. */
const latinEnd = new Set([".", "!", "?", ";", "\u2026"]);
/** CJK full-width ends: no space follows them in CJK text. */
const cjkEnd = new Set(["\u3002", "\uFF01", "\uFF1F", "\uFF1B", "\uFF0E"]);
/** Closing quotes and brackets that belong to the sentence they end. */
const closers = new Set(["\"", "'", ")", "]", "}", "\u201D", "\u2019", "\u00BB", "\u300D", "\u300F", "\uFF09", "\u3011"]);
/**
 * Words whose period does not end a sentence: titles, "etc.", "vs.", "e.g.", months, units.
 * Lower case, without the period. Single letters (initials: "J. R. R. Tolkien") are handled apart.
 */
const abbreviations = new Set([
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "ft", "sgt", "col", "gen", "lt", "capt", "maj", "gov", "sen", "rep",
    "rev", "hon", "vs", "etc", "e.g", "i.e", "cf", "approx", "no", "nos", "vol", "fig", "inc", "ltd", "co", "corp", "dept",
    "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "mon", "tue", "wed", "thu", "fri", "sat", "sun"
]);

/**
 * Splits text for a speech model, one sentence per piece, so audio can be streamed sentence by
 * sentence and every piece fits the model:
 * - ends: `. ! ? ; …` followed by a space or the end, CJK `。！？；` anywhere, and line breaks;
 *   closing quotes and brackets stay with their sentence;
 * - a period after an abbreviation ("Dr. Smith", "e.g. this") or an initial ("J. Smith") is not an
 *   end, and neither is one inside a number ("3.14") or a word ("example.com");
 * - a sentence longer than `maxChars` is cut at a comma (or other clause mark), else at a space
 *   (never inside a word, unless one word alone is longer than `maxChars`).
 * Pieces are trimmed; pieces without any letter or digit are merged into the one before them
 * (so "Wait... what?!" does not become a piece of bare dots).
 */
export function splitSentences(text: string, maxChars = 300): string[] {
    const sentences: string[] = [];
    const characters = [...text];
    let start = 0;
    let current = "";
    const finish = (end: number) => {
        current = characters.slice(start, end).join("").trim();
        start = end;
        if (current.length === 0)
            return;
        if (!/[\p{L}\p{N}]/u.test(current) && sentences.length > 0)
            sentences[sentences.length - 1] += current;
        else
            sentences.push(current);
    };
    for (let index = 0; index < characters.length; index++) {
        const character = characters[index];
        if (character === "\n" || character === "\r") {
            finish(index + 1);
            continue;
        }
        const latin = latinEnd.has(character);
        if (!latin && !cjkEnd.has(character))
            continue;
        // A run of ends ("?!", "...") and the closers after it belong to this sentence.
        let end = index + 1;
        while (end < characters.length && (latinEnd.has(characters[end]) || cjkEnd.has(characters[end])))
            end++;
        while (end < characters.length && closers.has(characters[end]))
            end++;
        if (latin) {
            const next = characters[end];
            if (next != null && !/\s/u.test(next))
                continue;
            if (character === "." && end === index + 1 && isAbbreviation(characters.slice(start, index).join("")))
                continue;
        }
        finish(end);
        index = end - 1;
    }
    finish(characters.length);
    return sentences.flatMap((sentence) => splitAtLength(sentence, maxChars));
}

/** Whether the last word of `before` (the text up to a period) is an abbreviation or an initial. */
function isAbbreviation(before: string): boolean {
    const word = /(\S+)$/u.exec(before)?.[1]?.replace(/^[("'\u201C\u2018]+/u, "");
    if (word == null)
        return false;
    if (/^\p{L}$/u.test(word))
        return true;
    return abbreviations.has(word.toLowerCase());
}
