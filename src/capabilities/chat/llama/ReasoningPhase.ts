import { createReasoningSplitter } from "./text/createReasoningSplitter.js";
import type { ReasoningFormat } from "../ChatEngine.js";
import type { ReasoningSplitter, ReasoningStart } from "./text/ReasoningSplitter.js";

export type { ReasoningStart } from "./text/ReasoningSplitter.js";

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
    private answerText = false;

    constructor(start: ReasoningStart, format: ReasoningFormat = "think-tags") {
        this.splitter = start === "call" ? null : createReasoningSplitter(format, start);
        this.gated = start !== "answer";
        this.reasoned = start === "reasoning";
    }

    get inAnswer(): boolean {
        return !this.gated || this.splitter == null || this.splitter.inAnswer;
    }

    get inReasoning(): boolean {
        return this.gated && this.splitter?.inReasoning === true;
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
     * The answer's text has begun (something but whitespace after the reasoning, or no reasoning split at all): stop
     * sequences are looked for from here (a thought's text, its tags and the whitespace after them are not searched).
     */
    get answerBegun(): boolean {
        return this.splitter == null || this.answerText;
    }

    /** A sampled (or forced) token's text. */
    push(text: string): void {
        if (this.splitter == null)
            return;
        if (this.splitter.inAnswer) {
            this.answerText ||= text.trim() !== "";
            return;
        }
        if (this.splitter.inReasoning && this.gated)
            this.thinkingTokens++;
        this.beforeAnswer++;
        const split = this.splitter.push(text);
        this.answerText ||= split.content.trim() !== "";
        this.reasoned ||= this.splitter.inReasoning;
    }
}
