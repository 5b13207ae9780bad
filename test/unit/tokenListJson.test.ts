import { describe, expect, it } from "vitest";
import type { Token } from "node-llama-cpp";
import { tokenListJson } from "../../src/capabilities/chat/llama/tokenListJson.js";
import type { TokenPiece } from "../../src/capabilities/chat/ChatEngine.js";

describe("tokenListJson (a long tokenize answer, written in the render thread)", () => {
    const pieces: Record<number, TokenPiece> = {0: "<s>", 1: " \"quoted\" \\ back", 2: "日本", 3: [0xe6], 4: "\n\t\u0001", 5: "🙂"};
    const tokens = [1, 2, 3, 3, 0, 4, 5, 2, 1];

    it("writes exactly JSON.stringify's text of the ids, or of the {id, piece} objects", () => {
        expect(tokenListJson(Uint32Array.from(tokens), null)).toBe(JSON.stringify(tokens));
        expect(tokenListJson(tokens, (token: Token) => pieces[token])).toBe(JSON.stringify(tokens.map((id) => ({id, piece: pieces[id]}))));
        expect(tokenListJson([], null)).toBe("[]");
    });
});
