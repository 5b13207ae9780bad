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
    const parts: string[] = [];
    let last = 0;
    for (const match of normalized.matchAll(punctuationRun)) {
        if (match.index > last)
            parts.push(await phonemizeRun(normalized.slice(last, match.index), language));
        parts.push(match[0]);
        last = match.index + match[0].length;
    }
    if (last < normalized.length)
        parts.push(await phonemizeRun(normalized.slice(last), language));
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

async function phonemizeRun(run: string, language: string): Promise<string> {
    if (!/[\p{L}\p{N}]/u.test(run))
        return run;
    // Keep the run's own leading and trailing space: it separates words from the punctuation around them.
    const lead = /^\s/u.test(run) ? " " : "";
    const trail = /\s$/u.test(run) ? " " : "";
    return lead + (await phonemize(run, language)).join(" ") + trail;
}
