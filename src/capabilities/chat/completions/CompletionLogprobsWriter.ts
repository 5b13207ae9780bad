import type { PromptEcho, TokenLogprob, TopLogprob } from "../ChatEngine.js";
import type { WireCompletionLogprobs, WireTopLogprobs } from "./CompletionWire.js";

/**
 * The `logprobs` of one wire choice of a legacy completion, piece by piece (a streamed chunk, or the
 * whole choice): OpenAI's parallel arrays `tokens`, `token_logprobs`, `top_logprobs` (the most likely
 * alternatives plus the chosen token, "up to logprobs + 1 elements") and `text_offset`, where each
 * token's text starts in the choice's text (the echoed prompt included).
 *
 * Offsets of generated tokens come from their bytes, decoded as a stream (a token that ends inside
 * a UTF-8 character starts where that character does), kept within the piece of text they came
 * with. A SentencePiece model drops the leading space of the very first token of a text it starts
 * from nothing (BOS only), so then the first token's space is not counted.
 */
export class CompletionLogprobsWriter {
    /** Length of the choice's text so far (echo included). */
    private textLength = 0;
    /** Length of the generated tokens' decoded bytes so far, and of the generated text. */
    private decodedLength = 0;
    private generatedLength = 0;
    private readonly decoder = new TextDecoder("utf-8");
    private leadingSpaceDropped: boolean | null = null;

    echo(echo: PromptEcho): WireCompletionLogprobs {
        const start = this.textLength;
        this.textLength += echo.text.length;
        const tokens = echo.tokens ?? [];
        return {
            tokens: tokens.map((token) => token.token),
            token_logprobs: tokens.map((token) => token.logprob),
            top_logprobs: tokens.map((token) => token.topLogprobs == null ? null : topDictionary(token.topLogprobs, token)),
            text_offset: tokens.map((token) => start + Math.min(token.offset, echo.text.length))
        };
    }

    /** The entries of the tokens whose text `text` completes. */
    piece(text: string, entries: readonly TokenLogprob[]): WireCompletionLogprobs {
        const start = this.textLength;
        const generatedBefore = this.generatedLength;
        if (this.leadingSpaceDropped == null && entries.length > 0)
            this.leadingSpaceDropped = this.textLength === 0 && entries[0].token.startsWith(" ") && !text.startsWith(" ");
        const shift = this.leadingSpaceDropped === true ? 1 : 0;
        const offsets = entries.map((entry) => {
            const at = Math.max(0, this.decodedLength - shift) - generatedBefore;
            this.decodedLength += this.decoder.decode(Uint8Array.from(entry.bytes), {stream: true}).length;
            return start + Math.min(Math.max(at, 0), text.length);
        });
        this.textLength += text.length;
        this.generatedLength += text.length;
        return {
            tokens: entries.map((entry) => entry.token),
            token_logprobs: entries.map((entry) => entry.logprob),
            top_logprobs: entries.map((entry) => topDictionary(entry.topLogprobs, entry)),
            text_offset: offsets
        };
    }
}

/** Token text -> logprob, most likely first, with the chosen token; a text shared by two tokens keeps the likelier. */
function topDictionary(top: readonly TopLogprob[], chosen: {token: string, logprob: number | null}): WireTopLogprobs {
    const dictionary: WireTopLogprobs = {};
    for (const entry of top)
        if (!Object.hasOwn(dictionary, entry.token))
            dictionary[entry.token] = entry.logprob;
    if (chosen.logprob != null && !Object.hasOwn(dictionary, chosen.token))
        dictionary[chosen.token] = chosen.logprob;
    return dictionary;
}
