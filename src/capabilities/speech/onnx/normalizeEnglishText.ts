/** Full-width CJK punctuation -> the ASCII mark espeak and the phoneme vocabulary know. */
const fullWidth: Record<string, string> = {
    "\u3001": ", ", "\u3002": ". ", "\uFF01": "! ", "\uFF0C": ", ", "\uFF1A": ": ", "\uFF1B": "; ", "\uFF1F": "? ", "\uFF08": "(", "\uFF09": ")"
};

const titles: [RegExp, string][] = [
    [/\bDr\.(?=\s+\p{Lu})/gu, "Doctor"],
    [/\bMr\.(?=\s)/gu, "Mister"],
    [/\bMrs\.(?=\s)/gu, "Missus"],
    [/\bMs\.(?=\s)/gu, "Miss"],
    [/\bProf\.(?=\s+\p{Lu})/gu, "Professor"],
    [/\bSt\.(?=\s+\p{Lu})/gu, "Saint"],
    // At the very end the period also ends the sentence: keep one.
    [/\betc\.$/giu, "etcetera."],
    [/\betc\./giu, "etcetera"],
    [/\be\.g\./giu, "for example"],
    [/\bi\.e\./giu, "that is"],
    [/\bvs\./giu, "versus"]
];

/**
 * Rewrites English text into words espeak reads the way a person would, for Kokoro's phonemizer
 * (espeak alone reads "$3.50" as "dollar three point five zero" and "1984" as "one thousand...").
 * Quotes and CJK punctuation are unified; titles and common abbreviations spelled out; money,
 * times, years, decimals, thousands separators and numeric ranges turned into words or plain digits
 * (espeak reads plain digits well). The sentence's punctuation is kept: it shapes the prosody.
 */
export function normalizeEnglishText(text: string): string {
    let result = text
        .replace(/[\u2018\u2019\u201B\u2032]/gu, "'")
        .replace(/[\u00AB\u00BB\u201E\u201F\u2033]/gu, "\"")
        .replace(/[\u3001\u3002\uFF01\uFF0C\uFF1A\uFF1B\uFF1F\uFF08\uFF09]/gu, (mark) => fullWidth[mark])
        .replace(/[^\S\n]+/gu, " ");
    for (const [pattern, words] of titles)
        result = result.replace(pattern, words);
    return result
        .replace(/(?<=\d),(?=\d{3}\b)/gu, "")
        .replace(/([$£€])(\d+)(?:\.(\d{1,2}))?\b/gu, (_, symbol: string, whole: string, fraction: string | undefined) => money(symbol, whole, fraction))
        .replace(/\b([01]?\d|2[0-3]):([0-5]\d)\b(?!:)/gu, (_, hours: string, minutes: string) => clock(hours, minutes))
        .replace(/\b(\d{4})(s?)\b/gu, (_, digits: string, plural: string) => year(digits, plural))
        .replace(/(\d*)\.(\d+)/gu, (_, whole: string, fraction: string) => `${whole === "" ? "0" : whole} point ${[...fraction].join(" ")}`)
        .replace(/(?<=\d)\s*[-\u2013]\s*(?=\d)/gu, " to ")
        .replace(/\s+([,.!?;:])/gu, "$1")
        .trim();
}

function money(symbol: string, whole: string, fraction: string | undefined): string {
    const [unit, units, cent, cents] = symbol === "$" ? ["dollar", "dollars", "cent", "cents"]
        : symbol === "£" ? ["pound", "pounds", "penny", "pence"] : ["euro", "euros", "cent", "cents"];
    const main = `${whole} ${whole === "1" ? unit : units}`;
    if (fraction == null)
        return main;
    const small = Number.parseInt(fraction.padEnd(2, "0"), 10);
    return small === 0 ? main : `${main} and ${small} ${small === 1 ? cent : cents}`;
}

function clock(hours: string, minutes: string): string {
    const minute = Number.parseInt(minutes, 10);
    const hour = Number.parseInt(hours, 10);
    return minute === 0 ? `${hour} o'clock` : minute < 10 ? `${hour} oh ${minute}` : `${hour} ${minute}`;
}

/** 1100..1999 and 2010.. read as years ("19 84"); 2000..2009 and other numbers stay as they are. */
function year(digits: string, plural: string): string {
    const value = Number.parseInt(digits, 10);
    if (value < 1100 || value > 2099 || (value >= 2000 && value < 2010))
        return digits + plural;
    const century = digits.slice(0, 2);
    const rest = Number.parseInt(digits.slice(2), 10);
    if (rest === 0)
        return `${century} hundred${plural}`;
    return rest < 10 ? `${century} oh ${rest}${plural}` : `${century} ${rest}${plural}`;
}
