import { partialTagLength } from "./partialTagLength.js";
import type { ReasoningSplitter } from "./ReasoningSplitter.js";

/** The tags of a format whose reasoning is a block before the answer. */
export type ThinkTags = {open: string, close: string, channel?: string};
/** Qwen3's, DeepSeek-R1's and most reasoning models'. */
export const thinkTags: ThinkTags = {open: "<think>", close: "</think>"};
/** Gemma 4's (its template writes `<|channel>thought\n` + thought + `\n<channel|>`). */
export const gemma4Tags: ThinkTags = {open: "<|channel>thought", close: "<channel|>", channel: "<|channel>"};

/**
 * A piece of generated text, split: the model's reasoning and its answer. `contentRanges`: where the content was in
 * the text pushed so far (offsets into the whole of it), when there is content; the entries of the tokens written
 * there are the answer's logprobs.
 */
export type SplitText = {reasoning: string, content: string, contentRanges?: [start: number, end: number][]};

/**
 * Splits a think-tags model's output (Qwen3, DeepSeek-R1 distills, most reasoning models of 2025-26)
 * into its reasoning (`<think>...</think>`, or Gemma 4's tags: `tags`) and its answer, as the text streams: a tag split across
 * pieces is held back until it is whole, and the tags never reach either side. `startsInReasoning`:
 * the prompt already opened the think block (DeepSeek-R1's template ends with `<think>\n`), so the
 * output is reasoning until `</think>`; otherwise a leading `<think>` (after whitespace) opens it. `callStarts`: a
 * call in the model's format inside the thought is the answer's when the thought is never closed (a model that calls a
 * tool from inside its thought: Qwen3.5, DeepSeek-V4, Kimi-K2-Thinking, as llama.cpp reads them), and the thought's when
 * `</think>` follows (a thought that quotes a call): from the call's start the text is held until one or the other.
 */
export class ThinkSplitter implements ReasoningSplitter {
    /** `answer-start`: just after `</think>`, where the whitespace before the answer is dropped. */
    private state: "start" | "reasoning" | "answer-start" | "content";
    /** What was pushed and is not out yet: always the end of the text pushed so far. */
    private held = "";
    private pushed = 0;

    private readonly open: string;
    private readonly close: string;
    /**
     * Gemma 4's channel marker: its markup may come after the answer began too (as llama.cpp's gemma4 parser reads it): a
     * stray close tag or a lone marker is dropped, and a thought block there is reasoning, not content.
     */
    private readonly channel: string | undefined;
    /** Inside such a thought block, after the answer began. */
    private late = false;
    /** In the thought, from where a call starts: held until the thought closes (it was the thought's) or the output ends (the answer's). */
    private callHeld = false;

    constructor(startsInReasoning: boolean, tags: ThinkTags = thinkTags, private readonly callStarts: readonly string[] = []) {
        this.state = startsInReasoning ? "reasoning" : "start";
        ({open: this.open, close: this.close, channel: this.channel} = tags);
    }

    /** The text pushed so far has left the reasoning (or never had any): what follows is the answer. */
    get inAnswer(): boolean {
        return this.state === "answer-start" || this.state === "content";
    }

    /** The text pushed so far is inside the think block. */
    get inReasoning(): boolean {
        return this.state === "reasoning";
    }

    get undecided(): number {
        return this.held.length;
    }

    get heldMayBeContent(): boolean {
        return (this.state === "start" || this.state === "content") && !this.late;
    }

    push(text: string): SplitText {
        const out: SplitText = {reasoning: "", content: ""};
        this.held += text;
        this.pushed += text.length;
        for (;;) {
            if (this.state === "start") {
                const trimmed = this.held.trimStart();
                if (trimmed.startsWith(this.open)) {
                    this.held = trimmed.slice(this.open.length);
                    this.state = "reasoning";
                    continue;
                }
                if (trimmed === "" || this.open.startsWith(trimmed))
                    return out; // still possibly the opening tag
                this.state = "content";
            }
            if (this.state === "reasoning") {
                const end = this.held.indexOf(this.close);
                const call = this.callHeld || end !== -1 ? -1 : this.callStartIn(this.held);
                if (call !== -1) {
                    out.reasoning += this.held.slice(0, call);
                    this.held = this.held.slice(call);
                    this.callHeld = true;
                }
                if (this.callHeld && end === -1)
                    return out;
                this.callHeld = false;
                if (end !== -1) {
                    out.reasoning += this.held.slice(0, end);
                    this.held = this.held.slice(end + this.close.length);
                    this.state = "answer-start";
                    continue;
                }
                const keep = Math.max(partialTagLength(this.held, this.close), ...this.callStarts.map((start) => partialTagLength(this.held, start)));
                out.reasoning += this.held.slice(0, this.held.length - keep);
                this.held = this.held.slice(this.held.length - keep);
                return out;
            }
            if (this.state === "answer-start") {
                this.held = this.held.replace(/^\s+/, "");
                if (this.held === "")
                    return out;
                this.state = "content";
            }
            return this.channel == null ? this.takeContent(out) : this.takeChannelContent(out, this.channel);
        }
    }

    /** Where the first call starts in `text` (-1: none). */
    private callStartIn(text: string): number {
        let first = -1;
        for (const start of this.callStarts) {
            const at = text.indexOf(start);
            if (at !== -1 && (first === -1 || at < first))
                first = at;
        }
        return first;
    }

    /** Content where Gemma 4's markup may still come: the markup and any thought block dropped from it (see `channel`). */
    private takeChannelContent(out: SplitText, channel: string): SplitText {
        for (;;) {
            if (this.late) {
                const end = this.held.indexOf(this.close);
                const upTo = end === -1 ? this.held.length - partialTagLength(this.held, this.close) : end;
                out.reasoning += this.held.slice(0, upTo);
                if (end === -1) {
                    this.held = this.held.slice(upTo);
                    return out;
                }
                this.held = this.held.slice(end + this.close.length);
                this.late = false;
                continue;
            }
            const closeAt = this.held.indexOf(this.close);
            const channelAt = this.held.indexOf(channel);
            const at = closeAt === -1 ? channelAt : channelAt === -1 ? closeAt : Math.min(closeAt, channelAt);
            if (at === -1) {
                this.contentUpTo(out, this.held.length - Math.max(partialTagLength(this.held, this.close), partialTagLength(this.held, this.open)));
                return out;
            }
            this.contentUpTo(out, at);
            if (this.held.startsWith(this.close))
                this.held = this.held.slice(this.close.length);
            else if (this.held.startsWith(this.open)) {
                this.held = this.held.slice(this.open.length);
                this.late = true;
            } else if (this.open.startsWith(this.held))
                return out; // still possibly a thought block's opening
            else
                this.held = this.held.slice(channel.length);
        }
    }

    /** The first `length` characters held are content. */
    private contentUpTo(out: SplitText, length: number) {
        if (length <= 0)
            return;
        const start = this.pushed - this.held.length;
        out.content += this.held.slice(0, length);
        (out.contentRanges ??= []).push([start, start + length]);
        this.held = this.held.slice(length);
    }

    /** At the end: what was held back (a tag that never completed) goes where it was; a call held in a thought never closed is the answer. */
    flush(): SplitText {
        if ((this.state !== "reasoning" || this.callHeld) && !this.late)
            return this.takeContent({reasoning: "", content: ""});
        const rest = this.held;
        this.held = "";
        return {reasoning: rest, content: ""};
    }

    /** All that is held is content. */
    private takeContent(out: SplitText): SplitText {
        if (this.held !== "") {
            out.content += this.held;
            (out.contentRanges ??= []).push([this.pushed - this.held.length, this.pushed]);
            this.held = "";
        }
        return out;
    }

    /** A whole text at once. */
    static split(text: string, startsInReasoning: boolean, tags: ThinkTags = thinkTags): SplitText {
        const splitter = new ThinkSplitter(startsInReasoning, tags);
        const first = splitter.push(text);
        const rest = splitter.flush();
        return {reasoning: (first.reasoning + rest.reasoning).trim(), content: first.content + rest.content};
    }
}
