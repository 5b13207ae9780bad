import type { Token } from "node-llama-cpp";
import type { TokenPiece } from "../ChatEngine.js";

/**
 * A token list as the tokenize routes write it (`tokens`: ids, or `{id, piece}` objects with `with_pieces`), as JSON
 * text: JSON.stringify's output for the same list, built here so that a long list (millions of tokens for a body of
 * a few MB) is written in the render thread and crosses to the main thread as bytes.
 */
export function tokenListJson(tokens: ArrayLike<number>, piece: ((token: Token) => TokenPiece) | null): string {
    const parts: string[] = [];
    const pieceJson = new Map<number, string>();
    for (let index = 0; index < tokens.length; index++) {
        const token = tokens[index];
        if (piece == null) {
            parts.push(String(token));
            continue;
        }
        let json = pieceJson.get(token);
        if (json == null) {
            json = JSON.stringify(piece(token as Token));
            pieceJson.set(token, json);
        }
        parts.push(`{"id":${token},"piece":${json}}`);
    }
    return `[${parts.join(",")}]`;
}
