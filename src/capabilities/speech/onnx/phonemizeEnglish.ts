import { phonemize } from "phonemizer";
import { normalizeEnglishText } from "./normalizeEnglishText.js";

/**
 * Punctuation kept between the phonemized runs: espeak drops it, but Kokoro's vocabulary has it and
 * the model uses it for pauses and intonation.
 */
const punctuationRun = /(?:\s*[;:,.!?\u00A1\u00BF\u2014\u2026"\u201C\u201D()[\]{}]+\s*)+/gu;

type Piece = {text: string, run: number | null};

/**
 * English texts (sentences) -> the phoneme strings Kokoro was trained on: normalised text,
 * phonemized by espeak-ng (the `phonemizer` package: espeak-ng compiled to WebAssembly, no binary,
 * no network) run by run between punctuation marks, the marks kept, then espeak's symbols mapped to
 * the ones in Kokoro's vocabulary. `british` picks espeak's British English voice (Kokoro's b*
 * voices), else en-us.
 *
 * All texts go to espeak in one call when possible (fewer calls into the WebAssembly module while it
 * is still warming up; once warm, a sentence costs about 20 ms of CPU either way).
 */
export async function phonemizeEnglish(texts: readonly string[], british: boolean): Promise<string[]> {
    // "en" is espeak's British voice; "en-gb" right after "en-us" keeps the American one (phonemizer 1.2.1).
    const language = british ? "en" : "en-us";
    const runs: string[] = [];
    const pieces = texts.map((text) => splitRuns(normalizeEnglishText(text), runs));
    const phonemized = await phonemizeRuns(runs, language);
    return pieces.map((textPieces) => {
        const joined = textPieces.map(({text, run}) => run == null ? text
            // Keep the run's own leading and trailing space: it separates words from the punctuation around them.
            : (/^\s/u.test(text) ? " " : "") + phonemized[run] + (/\s$/u.test(text) ? " " : "")).join("");
        return toKokoroSymbols(joined, british);
    });
}

/** A text's runs and the punctuation between them, in order; speakable runs are appended to `runs`. */
function splitRuns(text: string, runs: string[]): Piece[] {
    const pieces: Piece[] = [];
    const add = (part: string, punctuation: boolean) => {
        const speak = !punctuation && /[\p{L}\p{N}]/u.test(part);
        pieces.push({text: part, run: speak ? runs.push(part.trim()) - 1 : null});
    };
    let last = 0;
    for (const match of text.matchAll(punctuationRun)) {
        if (match.index > last)
            add(text.slice(last, match.index), false);
        add(match[0], true);
        last = match.index + match[0].length;
    }
    if (last < text.length)
        add(text.slice(last), false);
    return pieces;
}

/**
 * Phonemizes runs of text in one espeak call: a blank line ends a clause in espeak, so runs joined by
 * blank lines come back one line each. If espeak split differently (the line count does not
 * match), each run is phonemized alone.
 */
async function phonemizeRuns(runs: string[], language: string): Promise<string[]> {
    if (runs.length === 0)
        return [];
    const lines = await phonemize(runs.join("\n\n"), language);
    if (lines.length === runs.length)
        return lines;
    const each: string[] = [];
    for (const run of runs)
        each.push((await phonemize(run, language)).join(" "));
    return each;
}

/** espeak's output in the symbols of Kokoro's vocabulary and training data. */
function toKokoroSymbols(phonemes: string, british: boolean): string {
    let result = phonemes
        .replace(/r/gu, "\u0279")
        .replace(/x/gu, "k")
        .replace(/\u02B2/gu, "j")
        .replace(/\u026C/gu, "l")
        // espeak writes "one hundred" as one word; Kokoro's training data separates it.
        .replace(/(?<=[a-z\u0279\u02D0])(?=h\u02C8\u028Cnd\u0279\u026Ad)/gu, " ")
        // A plural "z" espeak detached from its word ("dogs ." -> "dɑːɡz.").
        .replace(/ z(?=[;:,.!?\u00A1\u00BF\u2014\u2026"\u201C\u201D ]|$)/gu, "z");
    if (!british)
        result = result.replace(/(?<=n\u02C8a\u026A)ti(?!\u02D0)/gu, "di");
    return result.trim();
}
