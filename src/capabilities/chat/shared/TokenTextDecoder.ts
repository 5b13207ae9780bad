const replacementCharacter = "\uFFFD";
// A UTF-8 character is at most 4 bytes: an incomplete one spans at most the last 3 byte tokens.
const maxIncompleteTail = 3;
// If a model keeps writing bytes that never form valid UTF-8, give up holding them back.
const maxPendingTokens = 16;
// Enough previous tokens for the tokenizer's leading-space rules.
const contextTail = 8;

/** The text of `tokens` written after `previous` (the tokenizer's leading-space rules read what came before). */
export type Detokenize<Token extends number> = (tokens: readonly Token[], previous: readonly Token[]) => string;

/**
 * Turns generated tokens into text one token at a time without ever emitting half a UTF-8
 * character: byte-fallback tokens are held until their character is complete. The pieces it
 * returns always concatenate to what detokenizing the whole output at once gives, invalid byte
 * sequences included. Any tokenizer: `detokenize` is the engine's (llama.cpp's, a transformers.js tokenizer's).
 */
export class TokenTextDecoder<Token extends number = number> {
    private pending: Token[] = [];
    private previous: Token[];

    constructor(private readonly detokenize: Detokenize<Token>, promptTail: readonly Token[]) {
        this.previous = promptTail.slice(-contextTail);
    }

    /** Tokens pushed whose text has not been returned yet. */
    get pendingCount() {
        return this.pending.length;
    }

    push(token: Token): string {
        this.pending.push(token);
        const text = this.decode(this.pending);
        if (!text.endsWith(replacementCharacter) || this.pending.length >= maxPendingTokens)
            return this.commit(this.pending.length, text);

        // The tail may be a character still being written. Release the head if it decodes on its
        // own exactly as it does together with the tail (no invalid sequence spans the cut).
        for (let cut = this.pending.length - maxIncompleteTail; cut > 0; cut--) {
            const head = this.decode(this.pending.slice(0, cut));
            const tail = this.detokenize(this.pending.slice(cut), this.previous.concat(this.pending.slice(0, cut)).slice(-contextTail));
            if (head + tail === text)
                return this.commit(cut, head);
        }
        return "";
    }

    flush(): string {
        return this.pending.length === 0 ? "" : this.commit(this.pending.length, this.decode(this.pending));
    }

    private decode(tokens: readonly Token[]) {
        return this.detokenize(tokens, this.previous);
    }

    private commit(count: number, text: string) {
        this.previous = this.previous.concat(this.pending.slice(0, count)).slice(-contextTail);
        this.pending = this.pending.slice(count);
        return text;
    }
}
