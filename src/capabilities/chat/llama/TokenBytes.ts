import type { LlamaModel, Token } from "node-llama-cpp";
import { byteLevelPieceBytes } from "../shared/byteLevelBytes.js";
import { ggmlTokenType, ggmlVocabulary } from "./ggmlVocabulary.js";

const utf8 = new TextEncoder();

/**
 * The exact bytes one token stands for, as OpenAI's `logprobs[].bytes` has them, read from the
 * vocabulary rather than detokenized: detokenizing a single token loses SentencePiece's leading
 * space and turns a byte that is part of a longer UTF-8 character into U+FFFD.
 * - SentencePiece ("llama"): `<0xNN>` byte tokens are the byte NN; other pieces are their UTF-8
 *   with `▁` as a space.
 * - byte-level BPE ("gpt2", Qwen, Llama 3): each character maps back to one byte (GPT-2's
 *   bytes_to_unicode table).
 * - other tokenizers: the UTF-8 of the detokenized token.
 * Control tokens (never part of the content, but possible alternatives) are their literal text.
 */
export class TokenBytes {
    private readonly cache = new Map<number, readonly number[]>();
    private readonly kind: string | undefined;
    private readonly pieces: readonly string[] | undefined;
    private readonly types: readonly number[] | undefined;

    constructor(private readonly model: LlamaModel) {
        const ggml = ggmlVocabulary(model);
        this.kind = ggml?.model;
        this.pieces = ggml?.tokens;
        this.types = ggml?.token_type;
    }

    of(token: Token): readonly number[] {
        let bytes = this.cache.get(token);
        if (bytes == null) {
            bytes = this.compute(token);
            this.cache.set(token, bytes);
        }
        return bytes;
    }

    private compute(token: Token): readonly number[] {
        const piece = this.pieces?.[token];
        if (piece == null)
            return [...utf8.encode(this.model.detokenize([token], true))];
        if (this.kind === "llama") {
            const byte = this.types?.[token] === ggmlTokenType.byte ? /^<0x([0-9A-Fa-f]{2})>$/.exec(piece) : null;
            return byte != null ? [parseInt(byte[1], 16)] : [...utf8.encode(piece.replaceAll("\u2581", " "))];
        }
        if (this.kind === "gpt2")
            return byteLevelPieceBytes(piece) ?? [...utf8.encode(piece)]; // an added (control) token spelled in plain text
        return [...utf8.encode(this.model.detokenize([token], true))];
    }
}
