import type { LlamaModel } from "node-llama-cpp";
import type { ChatJob } from "../ChatEngine.js";

const controlTokenType = 3;
const utf8 = new TextEncoder();

/**
 * A lower bound on a prompt's token count from its text's byte length alone, so a prompt that
 * cannot fit the context is refused before it is tokenized (tokenizing runs on the main thread:
 * 10 MB took 3.3 s, stalling every other request). No token of the text stands for more bytes than
 * the vocabulary's longest piece, so a text of B bytes has at least B / longest tokens.
 *
 * Sound only for tokenizers that keep every byte of the text (SentencePiece "llama", byte-level BPE
 * "gpt2"); for others (WordPiece drops whitespace) the floor is 0 and the prompt is tokenized as before.
 */
export class PromptTokenFloor {
    /** Bytes of the longest piece a text can become (control tokens excluded), or null: no bound. */
    readonly longestPieceBytes: number | null;

    constructor(model: LlamaModel) {
        const ggml = model.fileInfo.metadata.tokenizer?.ggml as {model?: string, tokens?: string[], token_type?: number[]} | undefined;
        if ((ggml?.model !== "llama" && ggml?.model !== "gpt2") || ggml.tokens == null || ggml.tokens.length === 0) {
            this.longestPieceBytes = null;
            return;
        }
        let longest = 1;
        for (const [index, piece] of ggml.tokens.entries()) {
            if (ggml.token_type?.[index] === controlTokenType)
                continue;
            // The piece's UTF-8 length is at least the bytes it stands for (`▁` is 3 bytes for one space;
            // a byte-level BPE character is 1 or 2 bytes for one byte): a safe upper bound.
            longest = Math.max(longest, utf8.encode(piece).length);
        }
        this.longestPieceBytes = longest;
    }

    /** At least this many tokens, whatever the template adds. */
    of(job: Pick<ChatJob, "turns" | "rawPrompt">): number {
        if (job.rawPrompt != null && typeof job.rawPrompt.prompt !== "string")
            return job.rawPrompt.prompt.length;
        if (this.longestPieceBytes == null)
            return 0;
        let bytes = 0;
        if (job.rawPrompt != null)
            bytes = Buffer.byteLength(job.rawPrompt.prompt as string) + Buffer.byteLength(job.rawPrompt.suffix ?? "");
        else
            for (const turn of job.turns)
                bytes += Buffer.byteLength(turn.content);
        return Math.ceil(bytes / this.longestPieceBytes);
    }
}
