import type { ReasoningFormat, TokenLogprob } from "../../ChatEngine.js";
import { createReasoningSplitter } from "./createReasoningSplitter.js";
import type { ReasoningSplitter, ReasoningStart } from "./ReasoningSplitter.js";
import type { SplitText } from "./ThinkSplitter.js";

/** Where a choice's split output goes as it comes; the answer's pieces with the logprobs entries of their tokens. */
export type ReasoningSink = {reasoning: (text: string) => void, content: (text: string, logprobs?: TokenLogprob[]) => void};

/** The logprobs entries that came with a piece of output, and where that piece is in the output. */
type EntryGroup = {start: number, end: number, entries: readonly TokenLogprob[]};

/**
 * A choice's output on its way out of a chat engine: for a thinking model, split into its reasoning and
 * its answer (ThinkSplitter, HarmonySplitter) and handed to the two sinks as it streams; for another model, all answer.
 * Shared by every engine, so each wire format only reads `reasoning` and the answer apart.
 *
 * Logprobs entries (given with the pieces whose text completes their tokens) follow the text: the entries of a
 * piece that is part of the answer go out with the answer; those of reasoning, of the markup around it and of the
 * whitespace dropped after it never do, so the answer's tokens joined are the answer.
 */
export class ReasoningOutput {
    private readonly splitter: ReasoningSplitter | null;
    private reasoningText = "";
    /** Whitespace at the end of the reasoning so far: sent only once more reasoning follows it (see emitReasoning). */
    private heldWhitespace = "";
    private contentText = "";
    /** Entries of pieces not yet known to be answer or not. */
    private readonly groups: EntryGroup[] = [];
    private pushed = 0;
    private contentLogprobs: TokenLogprob[] | null = null;

    /** `start`: where the output starts (the prompt opened the reasoning, or a call). */
    /** `callStarts`: where a call starts, a thought the model never closed ends (createReasoningSplitter). */
    constructor(format: ReasoningFormat | null | undefined, start: ReasoningStart, private readonly sink: ReasoningSink, readsCalls = true,
        callStarts: readonly string[] = []) {
        this.splitter = format == null ? null : createReasoningSplitter(format, start, readsCalls, callStarts);
    }

    get splits(): boolean {
        return this.splitter != null;
    }

    /** A piece of output, with the logprobs entries of the tokens whose text it completes (when logprobs are asked for). */
    push(text: string, logprobs?: readonly TokenLogprob[]): void {
        if (logprobs != null)
            this.contentLogprobs ??= [];
        if (this.splitter == null) {
            this.emitContent(text, logprobs == null ? undefined : [...logprobs]);
            return;
        }
        const start = this.pushed;
        this.pushed += text.length;
        if (logprobs != null && logprobs.length > 0) {
            if (text === "") {
                // Tokens without text (a control token) belong where the output is.
                if (this.splitter.inAnswer && this.contentText !== "")
                    this.emitContent("", [...logprobs]);
            } else
                this.groups.push({start, end: this.pushed, entries: logprobs});
        }
        this.emit(this.splitter.push(text));
    }

    /**
     * At the end: what was held back; returns the whole answer and reasoning (null when none, undefined when not split), and
     * the answer's logprobs. `ended`: the model ended its output itself (not the token limit).
     */
    finish(ended = false): {content: string, reasoning?: string | null, logprobs?: TokenLogprob[]} {
        const logprobs = this.contentLogprobs == null ? {} : {logprobs: this.contentLogprobs};
        if (this.splitter == null)
            return {content: this.contentText, ...logprobs};
        this.emit(this.splitter.flush(ended));
        this.groups.length = 0;
        const reasoning = this.reasoningText.trim();
        return {content: this.contentText, reasoning: reasoning === "" ? null : reasoning, ...logprobs};
    }

    private emit(split: SplitText) {
        if (split.reasoning !== "")
            this.emitReasoning(split.reasoning);
        const entries = this.takeEntries(split.contentRanges ?? []);
        if (split.content !== "" || entries.length > 0)
            this.emitContent(split.content, this.contentLogprobs == null ? undefined : entries);
        // What is decided and was not answer never will be.
        const decided = this.pushed - this.splitter!.undecided;
        while (this.groups.length > 0 && this.groups[0].end <= decided)
            this.groups.shift();
    }

    /** The entries of the pieces the answer's text came from (a piece partly answer counts as answer). */
    private takeEntries(ranges: readonly [number, number][]): TokenLogprob[] {
        const taken: TokenLogprob[] = [];
        for (let index = 0; index < this.groups.length;) {
            const group = this.groups[index];
            if (ranges.some(([start, end]) => start < group.end && group.start < end)) {
                taken.push(...group.entries);
                this.groups.splice(index, 1);
            } else
                index++;
        }
        return taken;
    }

    /**
     * Reasoning goes out trimmed as the whole is (`finish`): whitespace before its first character is dropped, and
     * whitespace after its last is held until more reasoning follows it, so the streamed pieces joined are the
     * reasoning a non-streamed answer carries (the `\n` after `<think>` and before `</think>` is neither).
     */
    private emitReasoning(text: string) {
        let piece = this.reasoningText === "" ? text.trimStart() : this.heldWhitespace + text;
        const body = piece.trimEnd();
        this.heldWhitespace = this.reasoningText === "" && body === "" ? "" : piece.slice(body.length);
        piece = body;
        if (piece === "")
            return;
        this.reasoningText += piece;
        this.sink.reasoning(piece);
    }

    private emitContent(text: string, logprobs?: TokenLogprob[]) {
        this.contentText += text;
        if (logprobs != null)
            this.contentLogprobs?.push(...logprobs);
        this.sink.content(text, logprobs);
    }
}
