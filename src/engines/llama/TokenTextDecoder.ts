import type { LlamaModel, Token } from "node-llama-cpp";

const replacementCharacter = "\uFFFD";
// A UTF-8 character is at most 4 bytes, so at most 4 byte-fallback tokens can be incomplete together.
const maxIncompleteTokens = 4;
// Enough previous tokens for the tokenizer's leading-space rules.
const contextTail = 8;

/**
 * Turns generated tokens into text one token at a time without ever emitting half a UTF-8
 * character: byte-fallback tokens are held until their character is complete.
 */
export class TokenTextDecoder {
    private pending: Token[] = [];
    private previous: Token[];

    constructor(private readonly model: LlamaModel, promptTail: readonly Token[]) {
        this.previous = promptTail.slice(-contextTail);
    }

    push(token: Token): string {
        this.pending.push(token);
        const text = this.model.detokenize(this.pending, false, this.previous);
        if (text.endsWith(replacementCharacter) && this.pending.length < maxIncompleteTokens)
            return "";
        this.commit();
        return text;
    }

    flush(): string {
        if (this.pending.length === 0)
            return "";
        const text = this.model.detokenize(this.pending, false, this.previous);
        this.commit();
        return text;
    }

    private commit() {
        this.previous = this.previous.concat(this.pending).slice(-contextTail);
        this.pending = [];
    }
}
