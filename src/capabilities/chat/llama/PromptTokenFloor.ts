import fs from "node:fs";
import type { LlamaModel } from "node-llama-cpp";
import type { ChatJob, ChatTurn } from "../ChatEngine.js";
import { ggmlTokenType, ggmlVocabulary } from "./ggmlVocabulary.js";
import type { TemplateFloor } from "./measureTemplateFloor.js";

/** Model files whose floor is remembered across unloads (the least recently loaded is forgotten first). */
const rememberedFloors = 64;

/**
 * A lower bound on a prompt's token count from what it holds, before anything is rendered or tokenized, so a prompt
 * that cannot fit the context is refused at once (rendering and tokenizing 250,000 empty messages took minutes).
 *
 * Text: no token of client text stands for more bytes than the vocabulary's longest piece, so B bytes of it are at
 * least B / longest tokens. That counts message content, and the tool text the template writes in full (measured
 * at load: measureTemplateFloor): descriptions, parameter schemas, call arguments (strings and keys), call results;
 * a string of tool text counts 2 tokens less than its own bound, as its first and last token may be shared with
 * the template text around it. Sound only for tokenizers that keep every byte of the text (SentencePiece "llama",
 * byte-level BPE "gpt2"); for others (WordPiece drops whitespace) text counts nothing.
 *
 * Messages: each message the template writes after the first adds at least the template's own tokens for a message
 * (measured at load); assistant turns in a row are one message, and those that end the conversation none. Without
 * a template, the messages are joined by a blank line, whose bytes count as text.
 *
 * `chat_template_kwargs` count nothing (a template may not read them): they are bounded in size instead (toChatJob).
 */
export class PromptTokenFloor {
    /** Bytes of the longest piece a text can become (control tokens excluded), or null: no bound. */
    readonly longestPieceBytes: number | null;

    /**
     * `template`: what the model's template adds (null: no template, messages joined by a blank line).
     * `longestPieceBytes`: measured already (PromptTokenFloor.measure); absent: measured here, in one piece.
     */
    constructor(model: LlamaModel, private readonly template: TemplateFloor | null = null, longestPieceBytes?: number | null) {
        if (longestPieceBytes !== undefined) {
            this.longestPieceBytes = longestPieceBytes;
            return;
        }
        const vocabulary = boundedVocabulary(model);
        this.longestPieceBytes = vocabulary == null ? null : longestPiece(vocabulary, 0, vocabulary.tokens.length, 1);
    }

    /**
     * The floor as a model's load measures it: the vocabulary's longest piece (~150,000 pieces: 15-100 ms on the
     * main thread) a slice at a time, `pause` between slices, then the template's (measureTemplateFloor, also paced).
     */
    static async measure(model: LlamaModel, template: () => Promise<TemplateFloor | null>, pause: () => Promise<void>): Promise<PromptTokenFloor> {
        const vocabulary = boundedVocabulary(model);
        let longest: number | null = null;
        if (vocabulary != null) {
            longest = 1;
            for (let start = 0; start < vocabulary.tokens.length; start += piecesPerSlice) {
                if (start > 0)
                    await pause();
                longest = longestPiece(vocabulary, start, Math.min(start + piecesPerSlice, vocabulary.tokens.length), longest);
            }
        }
        return new PromptTokenFloor(model, await template(), longest);
    }

    /**
     * The floor of the model at `modelPath`, measured once per file: a model loaded again after an unload (the library's
     * swaps) reuses it, as measuring the template costs 50-150 ms of every load. The file is known by its path, size
     * and modification time and by `fingerprint` (systemFingerprint: its first and last MiB), so a replaced file is
     * measured again.
     */
    static forModel(modelPath: string, fingerprint: string, measure: () => Promise<PromptTokenFloor>): Promise<PromptTokenFloor> {
        const stat = fs.statSync(modelPath);
        const key = JSON.stringify([modelPath, stat.size, stat.mtimeMs, fingerprint]);
        let floor = measuredFloors.get(key);
        measuredFloors.delete(key);
        if (floor == null) {
            floor = measure();
            // A measurement that failed is not remembered.
            floor.catch(() => measuredFloors.get(key) === floor && measuredFloors.delete(key));
        }
        measuredFloors.set(key, floor);
        if (measuredFloors.size > rememberedFloors)
            measuredFloors.delete(measuredFloors.keys().next().value!);
        return floor;
    }

    /** At least this many tokens for `bytes` of client text (message content, a raw prompt), wherever it stands. */
    ofText(bytes: number): number {
        return this.longestPieceBytes == null ? 0 : Math.ceil(bytes / this.longestPieceBytes);
    }

    /** At least this many tokens, whatever the template adds. */
    of(job: Pick<ChatJob, "turns" | "rawPrompt" | "tools">): number {
        if (job.rawPrompt != null && typeof job.rawPrompt.prompt !== "string")
            return job.rawPrompt.prompt.length;
        const longest = this.longestPieceBytes;
        if (job.rawPrompt != null)
            return this.ofText(utf8BytesAtLeast(job.rawPrompt.prompt as string) + utf8BytesAtLeast(job.rawPrompt.suffix ?? ""));
        let bytes = 0;
        for (const turn of job.turns)
            bytes += utf8BytesAtLeast(turn.content);
        if (this.template == null)
            return longest == null ? 0 : Math.ceil((bytes + 2 * Math.max(0, job.turns.length - 1)) / longest);
        let tokens = this.template.perMessageTokens * Math.max(0, renderedMessages(job.turns) - 1);
        if (longest == null)
            return tokens;
        tokens += this.ofText(bytes);
        const {renders} = this.template;
        const toolText = (value: unknown) => {
            for (const text of stringsOf(value))
                tokens += Math.max(0, Math.floor(utf8BytesAtLeast(text) / longest) - 2);
        };
        for (const fn of job.tools?.functions ?? []) {
            if (renders.descriptions)
                toolText(fn.description);
            if (renders.parameters)
                toolText(fn.parameters);
        }
        for (const turn of job.turns)
            for (const call of turn.toolCalls ?? []) {
                if (renders.arguments)
                    toolText(call.arguments);
                if (renders.results)
                    toolText(call.result);
            }
        return tokens;
    }
}

/** Strings this long (UTF-16 code units) or longer are counted by their length (utf8BytesAtLeast). */
const countedByLength = 64 * 1024;

/**
 * At least the UTF-8 bytes of `text`: exact for a short string; for a long one, its length, which never exceeds them
 * (a UTF-16 code unit is at least one byte; a surrogate pair, two units, is four), read without a pass over a 10 MB
 * message on the main thread. For non-ASCII text the floor is lower (up to 3x for CJK), still a floor.
 */
function utf8BytesAtLeast(text: string): number {
    return text.length >= countedByLength ? text.length : Buffer.byteLength(text);
}

/** Vocabulary pieces measured between two pauses of PromptTokenFloor.measure. */
const piecesPerSlice = 16_384;

/** The vocabulary where client text has a byte bound per token (see PromptTokenFloor), or null. */
function boundedVocabulary(model: LlamaModel): {tokens: string[], token_type?: number[]} | null {
    const ggml = ggmlVocabulary(model);
    return (ggml?.model !== "llama" && ggml?.model !== "gpt2") || ggml.tokens == null || ggml.tokens.length === 0 ? null : {...ggml, tokens: ggml.tokens};
}

/**
 * The longest piece's UTF-8 bytes among the tokens `start` to `end` (not included), at least `longest`. A piece's UTF-8
 * length is at least the bytes it stands for (`▁` is 3 bytes for one space; a byte-level BPE character is 1 or 2 bytes
 * for one byte): a safe upper bound. Control tokens are never client text.
 */
function longestPiece({tokens, token_type: types}: {tokens: string[], token_type?: number[]}, start: number, end: number, longest: number): number {
    for (let index = start; index < end; index++)
        if (types?.[index] !== ggmlTokenType.control)
            longest = Math.max(longest, Buffer.byteLength(tokens[index]));
    return longest;
}

/** PromptTokenFloor.forModel's floors (being measured, or measured), least recently loaded first. */
const measuredFloors = new Map<string, Promise<PromptTokenFloor>>();

/**
 * The messages a template writes for these turns, as node-llama-cpp gives them to it: assistant turns in a row are
 * one message (it joins them; so is a turn that continues the response of tool calls before it), and the assistant
 * turns at the end are the start of the answer (their content only).
 */
function renderedMessages(turns: readonly ChatTurn[]): number {
    let end = turns.length;
    while (end > 0 && turns[end - 1].role === "assistant")
        end--;
    let messages = 0;
    for (let index = 0; index < end; index++)
        if (turns[index].role !== "assistant" || turns[index - 1]?.role !== "assistant")
            messages++;
    return messages;
}

/** Every string of a JSON value, object keys included. */
function* stringsOf(value: unknown): Generator<string> {
    if (typeof value === "string")
        yield value;
    else if (Array.isArray(value))
        for (const item of value)
            yield* stringsOf(item);
    else if (value !== null && typeof value === "object")
        for (const [key, item] of Object.entries(value)) {
            yield key;
            yield* stringsOf(item);
        }
}
