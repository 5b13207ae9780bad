/**
 * GPT-2's byte-level BPE alphabet (Whisper's tokenizer): printable bytes stand for themselves, the
 * others for U+0100 on. A token's text in the vocabulary is one such character per byte.
 */
const byteOfCharacter = (() => {
    const printable = (byte: number) => (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) || (byte >= 0xAE && byte <= 0xFF);
    const map = new Map<string, number>();
    let next = 256;
    for (let byte = 0; byte < 256; byte++)
        map.set(String.fromCodePoint(printable(byte) ? byte : next++), byte);
    return map;
})();

/** The bytes a vocabulary entry stands for (a special token such as `<|en|>`: its UTF-8 text). */
export function byteLevelBytes(vocabularyEntry: string): number[] {
    const characters = [...vocabularyEntry];
    if (characters.every((character) => byteOfCharacter.has(character)))
        return characters.map((character) => byteOfCharacter.get(character)!);
    return [...Buffer.from(vocabularyEntry, "utf8")];
}
