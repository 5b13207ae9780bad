import fs from "node:fs";
import path from "node:path";
import type { PreTrainedTokenizer } from "@huggingface/transformers";
import type { TokenPiece } from "../../ChatEngine.js";
import { byteLevelPieceBytes } from "../../shared/byteLevelBytes.js";
import { tokenPiece } from "../../shared/tokenPiece.js";
import type { TokenBytesOf } from "../../shared/toTokenLogprob.js";
import type { Detokenize } from "../../shared/TokenTextDecoder.js";

const utf8 = new TextEncoder();

/**
 * A transformers.js tokenizer's text, as the shared chat pieces take it (in a worker): `detokenize` for TokenTextDecoder
 * (generated text, special tokens left out), each token's exact bytes (logprobs' `bytes`, /v1/tokenize's pieces) read
 * from the vocabulary as the llama engine's TokenBytes reads a GGUF's: a byte-level BPE vocabulary (tokenizer.json's
 * decoder `ByteLevel`: GPT-2, SmolLM, Qwen) spells each byte with one character; SentencePiece-style ones have `<0xNN>`
 * byte tokens and `▁` for a space; anything else is the UTF-8 of the token decoded alone.
 */
export class VocabularyText {
    private readonly pieces: string[] = [];
    private readonly cache = new Map<number, readonly number[]>();
    private readonly decoderTypes: ReadonlySet<string>;

    constructor(private readonly tokenizer: PreTrainedTokenizer, folder: string) {
        for (const [piece, id] of tokenizer.get_vocab())
            this.pieces[id] = piece;
        this.decoderTypes = decoderTypes(folder);
    }

    get size(): number {
        return this.pieces.length;
    }

    /** The text of `tokens` after `previous` (the decoder's leading-space and clean-up rules see both), special tokens left out. */
    readonly detokenize: Detokenize<number> = (tokens, previous) => {
        if (tokens.length === 0)
            return "";
        const decode = (ids: readonly number[]) => ids.length === 0 ? "" : this.tokenizer.decode([...ids], {skip_special_tokens: true});
        return decode([...previous, ...tokens]).slice(decode(previous).length);
    };

    /** The text of token ids with special tokens written as their text (as llama.cpp's detokenizer writes control tokens). */
    text(tokens: readonly number[]): string {
        return tokens.length === 0 ? "" : this.tokenizer.decode([...tokens], {skip_special_tokens: false});
    }

    readonly bytes: TokenBytesOf = {
        of: (token) => {
            let bytes = this.cache.get(token);
            if (bytes == null) {
                bytes = this.compute(token);
                this.cache.set(token, bytes);
            }
            return bytes;
        }
    };

    /** llama-server's piece: the token's bytes as text when they are valid UTF-8 on their own, else the byte values. */
    piece(token: number): TokenPiece {
        return tokenPiece(this.bytes.of(token));
    }

    private compute(token: number): readonly number[] {
        const piece = this.pieces[token];
        if (piece == null)
            return [...utf8.encode(this.text([token]))];
        if (this.decoderTypes.has("ByteLevel"))
            return byteLevelPieceBytes(piece) ?? [...utf8.encode(piece)]; // an added (special) token spelled in plain text
        const byte = this.decoderTypes.has("ByteFallback") ? /^<0x([0-9A-Fa-f]{2})>$/.exec(piece) : null;
        if (byte != null)
            return [parseInt(byte[1], 16)];
        if (this.decoderTypes.has("Metaspace") || this.decoderTypes.has("Replace"))
            return [...utf8.encode(piece.replaceAll("\u2581", " "))];
        return [...utf8.encode(this.text([token]))];
    }
}

/** The decoder types tokenizer.json names (a `Sequence`'s too). */
function decoderTypes(folder: string): ReadonlySet<string> {
    type Decoder = {type?: string, decoders?: Decoder[]};
    const json = JSON.parse(fs.readFileSync(path.join(folder, "tokenizer.json"), "utf8")) as {decoder?: Decoder | null};
    const types = new Set<string>();
    const visit = (decoder: Decoder | null | undefined) => {
        if (decoder?.type != null)
            types.add(decoder.type);
        decoder?.decoders?.forEach(visit);
    };
    visit(json.decoder);
    return types;
}
