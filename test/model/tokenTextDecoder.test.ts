import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getLlama, LlamaLogLevel, type LlamaModel, type Token } from "node-llama-cpp";
import { llamaDetokenize } from "../../src/capabilities/chat/llama/llamaTokenizerParts.js";
import { TokenTextDecoder } from "../../src/capabilities/chat/shared/TokenTextDecoder.js";
import { testLlamaTokens } from "../support/gguf/makeTestLlamaGguf.js";
import { tinyChatModelPath } from "../support/testModels.js";

const replacement = "\uFFFD";
/** The byte-fallback token `<0xNN>` of the test vocabulary. */
const byteToken = (byte: number) => (testLlamaTokens.firstByte.id + byte) as Token;

let model: LlamaModel;

beforeAll(async () => {
    const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
    model = await llama.loadModel({modelPath: tinyChatModelPath});
});

afterAll(async () => {
    await model?.dispose();
});

/** Pushes the tokens one at a time; returns every piece, flush() last. */
function decode(tokens: readonly Token[], promptTail: readonly Token[]) {
    const decoder = new TokenTextDecoder(llamaDetokenize(model), promptTail);
    const pieces = tokens.map((token) => decoder.push(token));
    pieces.push(decoder.flush());
    return pieces;
}

describe("TokenTextDecoder", () => {
    // The test vocabulary has only ASCII pieces: every other character is spelt with <0xNN> byte tokens.
    const text = "Héllo wörld 🦙 日本語 ✓ café\n end";

    it("the sample text really needs byte-fallback tokens", () => {
        const tokens = model.tokenize(text);
        const bytes = tokens.filter((token) => token >= byteToken(0) && token <= byteToken(255));
        // é ö é: 2 bytes each, 🦙: 4, 日本語: 9, ✓: 3, and "\n" is the byte token <0x0A>.
        expect(bytes).toHaveLength(23);
    });

    it("never returns part of a character, and the pieces add up to the whole text", () => {
        const tokens = model.tokenize(text);
        const pieces = decode(tokens, []);
        for (const piece of pieces)
            expect(piece).not.toContain(replacement);
        expect(pieces.join("")).toBe(model.detokenize(tokens));
        expect(pieces.join("")).toBe(text);
        // The emoji arrives whole, in one piece.
        expect(pieces).toContain("🦙");
    });

    it("after a BOS prompt the first token loses its leading space, as in whole-text detokenization", () => {
        const tokens = model.tokenize(text);
        const bos = model.tokens.bos!;
        const pieces = decode(tokens, [bos]);
        expect(pieces.join("")).toBe(model.detokenize(tokens, false, [bos]));
        expect(pieces.join("")).toBe(text);
        expect(pieces[0]).toBe("H");
    });

    it("after a text prompt the first token keeps its leading space", () => {
        // "▁Hello" after "assistant\n" is " Hello": the space is real text there.
        const prompt = model.tokenize("<|im_start|>assistant\n", true);
        const tokens = model.tokenize("Hello wörld");
        const pieces = decode(tokens, prompt);
        expect(pieces.join("")).toBe(model.detokenize(tokens, false, prompt));
        expect(pieces.join("")).toBe(" Hello wörld");
        expect(pieces.some((piece) => piece.includes(replacement))).toBe(false);
    });

    it("leading spaces of later tokens survive, also right after a multi-byte character", () => {
        const tokens = model.tokenize("日 the 🦙 the end");
        expect(decode(tokens, [model.tokens.bos!]).join("")).toBe("日 the 🦙 the end");
    });

    it("flush() releases a dangling incomplete character as a single U+FFFD", () => {
        // "a" then the first two bytes of 🦙 (F0 9F A6 99): generation ended in the middle of the emoji.
        const tokens = [...model.tokenize("a"), byteToken(0xF0), byteToken(0x9F)];
        const decoder = new TokenTextDecoder(llamaDetokenize(model), []);
        expect(decoder.push(tokens[0])).toBe("a");
        expect(decoder.push(tokens[1])).toBe("");
        expect(decoder.push(tokens[2])).toBe("");
        expect(decoder.flush()).toBe(replacement);
        expect(decoder.flush()).toBe("");
    });

    it("an invalid byte is released once the next token shows it cannot complete", () => {
        const tokens = [byteToken(0xE6), byteToken(0x97), ...model.tokenize("x")];
        const pieces = decode(tokens, [model.tokens.bos!]);
        expect(pieces.join("")).toBe(model.detokenize(tokens, false, [model.tokens.bos!]));
        expect(pieces.join("")).toBe(`${replacement} x`);
    });

    it("a truncated character does not swallow the complete character that follows it", () => {
        // F0 9F (half an emoji) then E6 97 A5 (日): the four-token limit must not cut 日 in half.
        const tokens = [byteToken(0xF0), byteToken(0x9F), byteToken(0xE6), byteToken(0x97), byteToken(0xA5)];
        const pieces = decode(tokens, [model.tokens.bos!]);
        expect(pieces.join("")).toBe(model.detokenize(tokens));
        expect(pieces.join("")).toBe(`${replacement}日`);
    });
});
