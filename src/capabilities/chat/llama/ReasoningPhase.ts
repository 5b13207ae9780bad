import { createReasoningSplitter } from "./text/createReasoningSplitter.js";
import type { ReasoningFormat } from "../ChatEngine.js";
import type { ReasoningSplitter, ReasoningStart } from "./text/ReasoningSplitter.js";
import type { StopSearch } from "../shared/StopSequenceFilter.js";

export type { ReasoningStart } from "./text/ReasoningSplitter.js";

/** How much of the latest text a phase keeps: where the answer begins, its first piece is at the end of it. */
const recentText = 8192;

/**
 * Where a thinking model's generation is, token by token, as the engine samples (before any text is
 * held back for stop sequences): still thinking or answering. The engine applies a grammar only once
 * `inAnswer`, and closes the think block itself when `thinkingTokens` reaches a budget. Where the output starts in
 * the answer (thinking off, a prefill continued), it is the answer for the grammar and the budget whatever it writes,
 * but a think block the model writes anyway is still told apart, as the output splits it (ReasoningOutput): its tokens
 * are counted, and stop sequences are not searched in it.
 */
export class ReasoningPhase {
    private splitter: ReasoningSplitter | null;
    /** The grammar and the budget follow the splitter (not where the output starts in the answer). */
    private readonly gated: boolean;
    /** Tokens sampled inside the think block (its closing tag included). */
    thinkingTokens = 0;
    /** Tokens sampled before the answer, counted once the output turned out to reason (tags included). */
    private beforeAnswer = 0;
    private reasoned: boolean;
    /** The answer's text has begun (something but whitespace after the reasoning): stop sequences are searched from there. */
    private answerText = false;
    /** The splitter reached the answer once: for the grammar and the budget it stays there (a late thought block aside). */
    private answered = false;
    /** The end of the text pushed so far (where the answer's first text is found, for the stop search). */
    private recent = "";

    constructor(start: ReasoningStart, format: ReasoningFormat = "think-tags") {
        this.splitter = start === "call" ? null : createReasoningSplitter(format, start);
        this.gated = start !== "answer";
        this.reasoned = start === "reasoning";
    }

    get inAnswer(): boolean {
        return !this.gated || this.splitter == null || this.answered || this.splitter.inAnswer;
    }

    get inReasoning(): boolean {
        return this.gated && !this.answered && this.splitter?.inReasoning === true;
    }

    /** The reasoning's tokens, for usage: 0 when the output never opened a think block. */
    get reasoningTokens(): number {
        return this.reasoned ? this.beforeAnswer : 0;
    }

    /** What follows is the answer, whatever its text (the engine opened it: a call message the grammar writes). */
    answerFromHere(): void {
        this.splitter = null;
    }

    /**
     * A sampled (or forced) token's text; returns where stop sequences are looked for in it: they are the answer's, so
     * not in a thought, its tags, the whitespace after them, or harmony's headers; text held back that may still be the
     * answer's start is held for the search too.
     */
    push(text: string): StopSearch {
        if (this.splitter == null)
            return "search";
        const answered = this.answered;
        const answering = this.answerText;
        if (!answered) {
            if (this.splitter.inReasoning && this.gated)
                this.thinkingTokens++;
            this.beforeAnswer++;
        }
        const split = this.splitter.push(text);
        this.recent = (this.recent + text).slice(-recentText);
        if (!answered)
            this.reasoned ||= this.splitter.inReasoning;
        this.answered ||= this.splitter.inAnswer;
        this.answerText ||= split.content.trim() !== "";
        if (split.content !== "" && this.answerText) {
            if (answering && split.reasoning === "")
                return "search";
            // Where the answer begins in this token (after markup or reasoning), it and what is held after it (which may be
            // the answer's too) end the text: only they are searched.
            const held = this.splitter.undecided;
            return this.recent.slice(0, this.recent.length - held).endsWith(split.content) ? {tail: split.content.length + held} : "pass";
        }
        return this.splitter.undecided > 0 && this.splitter.heldMayBeContent ? "hold" : "pass";
    }
}
