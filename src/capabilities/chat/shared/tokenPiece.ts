import type { TokenPiece } from "../ChatEngine.js";

const strictUtf8 = new TextDecoder("utf-8", {fatal: true});

/** llama-server's piece of a token: its exact bytes as text when they are valid UTF-8 on their own, else the byte values. */
export function tokenPiece(bytes: readonly number[]): TokenPiece {
    try {
        return strictUtf8.decode(Uint8Array.from(bytes));
    } catch {
        return [...bytes];
    }
}
