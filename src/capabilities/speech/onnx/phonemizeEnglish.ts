import { phonemize } from "phonemizer";
import { normalizeEnglishText } from "./normalizeEnglishText.js";

/**
 * Punctuation kept between the phonemized runs: espeak drops it, but Kokoro's vocabulary has it and
 * the model uses it for pauses and intonation.
 */
const punctuationRun = /(?:\s*[;:,.!?\u00A1\u00BF\u2014\u2026"\u201C\u201D()[\]{}]+\s*)+/gu;

/**
 * English text -> the phoneme string Kokoro was trained on: normalised text, phonemized by espeak-ng
 * (the `phonemizer` package: espeak-ng compiled to WebAssembly, no binary, no network) run by run
 * between punctuation marks, the marks kept, then espeak's symbols mapped to the ones in Kokoro's
 * vocabulary. `british` picks espeak's British English voice (Kokoro's b* voices), else en-us.
 */
export async function phonemizeEnglish(text: string, british: boolean): Promise<string> {
    const normalized = normalizeEnglishText(text);
    // "en" is espeak's British voice; "en-gb" right after "en-us" keeps the American one (phonemizer 1.2.1).
    const language = british ? "en" : "en-us";
    // Text runs and the punctuation between them, in order.
    const pieces: {text: string, speak: boolean}[] = [];
    let last = 0;
    for (const match of normalized.matchAll(punctuationRun)) {
        if (match.index > last)
            pieces.push({text: normalized.slice(last, match.index), speak: true});
        pieces.push({text: match[0], speak: false});
        last = match.index + match[0].length;
    }
    if (last < normalized.length)
        pieces.push({text: normalized.slice(last), speak: true});
    const spoken = pieces.filter((piece) => piece.speak && /[\p{L}\p{N}]/u.test(piece.text));
    const phonemized = await phonemizeRuns(spoken.map((piece) => piece.text), language);
    const parts = pieces.map((piece) => {
        if (!spoken.includes(piece))
            return piece.text;
        // Keep the run's own leading and trailing space: it separates words from the punctuation around them.
        return (/^\s/u.test(piece.text) ? " " : "") + phonemized[spoken.indexOf(piece)] + (/\s$/u.test(piece.text) ? " " : "");
    });
    let phonemes = parts.join("")
        // Symbols espeak uses that Kokoro's vocabulary spells differently.
        .replace(/r/gu, "\u0279")
        .replace(/x/gu, "k")
        .replace(/\u02B2/gu, "j")
        .replace(/\u026C/gu, "l")
        // espeak writes "one hundred" as one word; Kokoro's training data separates it.
        .replace(/(?<=[a-z\u0279\u02D0])(?=h\u02C8\u028Cnd\u0279\u026Ad)/gu, " ")
        // A plural "z" espeak detached from its word ("dogs ." -> "dɑːɡz.").
        .replace(/ z(?=[;:,.!?\u00A1\u00BF\u2014\u2026"\u201C\u201D ]|$)/gu, "z");
    if (!british)
        phonemes = phonemes.replace(/(?<=n\u02C8a\u026A)ti(?!\u02D0)/gu, "di");
    return phonemes.trim();
}

/**
 * Phonemizes runs of text, in one espeak call when it can: every call re-selects espeak's voice, which
 * costs more than phonemizing a sentence. A blank line ends a clause in espeak, so runs joined by
 * blank lines come back one line each; if espeak split differently (the line count does not match),
 * each run is phonemized alone.
 */
async function phonemizeRuns(runs: string[], language: string): Promise<string[]> {
    if (runs.length === 0)
        return [];
    const lines = await phonemize(runs.map((run) => run.trim()).join("\n\n"), language);
    if (lines.length === runs.length)
        return lines;
    return Promise.all(runs.map(async (run) => (await phonemize(run, language)).join(" ")));
}
