/**
 * Inverse of GPT-2's bytes_to_unicode, how a byte-level BPE vocabulary (GPT-2, Llama 3, Qwen, SmolLM) spells bytes:
 * printable bytes stand for themselves, the others for U+0100 onwards.
 */
const unicodeToByte: ReadonlyMap<string, number> = (() => {
    const map = new Map<string, number>();
    let next = 0;
    for (let byte = 0; byte < 256; byte++) {
        const printable = (byte >= 0x21 && byte <= 0x7e) || (byte >= 0xa1 && byte <= 0xac) || (byte >= 0xae && byte <= 0xff);
        map.set(String.fromCodePoint(printable ? byte : 256 + next++), byte);
    }
    return map;
})();

/** The bytes a byte-level BPE vocabulary's piece spells; null when a character is not in the table (an added token spelled in plain text). */
export function byteLevelPieceBytes(piece: string): number[] | null {
    const bytes: number[] = [];
    for (const char of piece) {
        const byte = unicodeToByte.get(char);
        if (byte == null)
            return null;
        bytes.push(byte);
    }
    return bytes;
}
