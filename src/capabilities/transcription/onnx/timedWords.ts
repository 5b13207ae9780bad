import type { TranscriptWord } from "../TranscriptionEngine.js";

/** Languages written without spaces between words: their "words" are characters, as OpenAI's Whisper splits them. */
const withoutSpaces = new Set(["zh", "ja", "th", "lo", "km", "my", "yue"]);
/** OpenAI's Whisper joins these to the word before them (append_punctuations) or after them (prepend_punctuations). */
const appended = new Set([..."\"'.。,，!！?？:：”)]}、"]);
const prepended = new Set([..."\"'“¿([{-"]);

/**
 * A segment's words and their times. `tokens` are its text tokens, `starts[i]` when token i starts and
 * `after` when the token after the last one starts (tokenStartTimes). A word is the tokens from one that
 * starts with a space up to the next such token (for languages written without spaces: each run of tokens
 * that decodes to whole characters), punctuation joined to its word as OpenAI's Whisper does; it starts when its
 * first token starts and ends when the next token starts. Times (from the start of the file) are kept inside the
 * segment (`start`..`end`), never before the previous word.
 */
export function timedWords(tokens: readonly number[], starts: readonly number[], after: number, decode: (tokens: number[]) => string,
    segment: {start: number, end: number, language: string}): TranscriptWord[] {
    const groups: number[][] = [];
    const perCharacter = withoutSpaces.has(segment.language);
    let open = false;
    tokens.forEach((token, index) => {
        const text = decode([token]);
        const startsWord = perCharacter ? !open : /^\s/u.test(text);
        if (groups.length === 0 || startsWord)
            groups.push([index]);
        else
            groups.at(-1)!.push(index);
        // A character split over several tokens decodes to U+FFFD until its last byte is in.
        open = perCharacter && decode(groups.at(-1)!.map((member) => tokens[member])).endsWith("\uFFFD");
    });
    const text = (group: number[]) => decode(group.map((index) => tokens[index])).trim();
    const only = (group: number[], characters: Set<string>) => text(group) !== "" && [...text(group)].every((character) => characters.has(character));
    for (let index = groups.length - 2; index >= 0; index--)
        if (only(groups[index], prepended) && !only(groups[index + 1], appended))
            groups.splice(index, 2, [...groups[index], ...groups[index + 1]]);
    for (let index = 1; index < groups.length; index++)
        if (only(groups[index], appended))
            groups.splice(index - 1, 2, [...groups[index - 1], ...groups[index]]), index--;
    const clamp = (time: number) => Math.min(segment.end, Math.max(segment.start, time));
    const words: TranscriptWord[] = [];
    groups.forEach((group, groupIndex) => {
        const word = text(group);
        if (word === "")
            return;
        const next = groupIndex + 1 < groups.length ? starts[groups[groupIndex + 1][0]] : after;
        const start = Math.max(clamp(starts[group[0]]), words.at(-1)?.start ?? segment.start);
        words.push({word, start, end: Math.max(start, clamp(next))});
    });
    return words;
}
