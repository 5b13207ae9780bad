/** Characters after which a too-long piece is best cut: clause punctuation (Latin and CJK) and dashes. */
const clauseEnd = /[,:;\u2014\u2013\uFF0C\u3001\uFF1A\uFF1B]/u;

/**
 * Cuts `text` into pieces of at most `maxChars` characters: after the last clause mark (comma,
 * colon, dash...) that leaves the piece at least a third full, else at the last space, else (one
 * "word" longer than `maxChars`, e.g. CJK text without punctuation) at `maxChars` exactly.
 * Pieces are trimmed; empty ones are dropped.
 */
export function splitAtLength(text: string, maxChars: number): string[] {
    const pieces: string[] = [];
    let rest = text.trim();
    while (rest.length > maxChars) {
        const window = rest.slice(0, maxChars + 1);
        let cut = -1;
        for (let index = maxChars - 1; index >= Math.floor(maxChars / 3); index--)
            if (clauseEnd.test(window[index]) && /\s/u.test(window[index + 1] ?? " ")) {
                cut = index + 1;
                break;
            }
        if (cut < 0) {
            // The character at maxChars may itself be a space: then the whole window is one clean piece.
            const space = window.search(/\s\S*$/u);
            cut = space > 0 ? space : maxChars;
        }
        const piece = rest.slice(0, cut).trim();
        if (piece.length > 0)
            pieces.push(piece);
        rest = rest.slice(cut).trim();
    }
    if (rest.length > 0)
        pieces.push(rest);
    return pieces;
}
