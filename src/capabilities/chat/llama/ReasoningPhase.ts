import { createReasoningSplitter } from "./text/createReasoningSplitter.js";
import type { ReasoningFormat } from "../ChatEngine.js";
import type { ReasoningSplitter, ReasoningStart } from "./text/ReasoningSplitter.js";

export type { ReasoningStart } from "./text/ReasoningSplitter.js";

/**
 * Where a thinking model's generation is, token by token, as the engine samples (before any text is
 * held back for stop sequences): still thinking or answering. The engine applies a grammar only once
 * `inAnswer`, and closes the think block itself when `thinkingTokens` reaches a budget.
 */
export class ReasoningPhase {
    private splitter: ReasoningSplitter | null;
    /** Tokens sampled inside the think block (its closing tag included). */
    thinkingTokens = 0;
    /** Tokens sampled before the answer, counted once the output turned out to reason (tags included). */
    private beforeAnswer = 0;
    private reasoned: boolean;

    constructor(start: ReasoningStart, format: ReasoningFormat = "think-tags") {
        this.splitter = start === "answer" || start === "call" ? null : createReasoningSplitter(format, start);
        this.reasoned = start === "reasoning";
    }

    get inAnswer(): boolean {
        return this.splitter == null || this.splitter.inAnswer;
    }

    get inReasoning(): boolean {
        return this.splitter?.inReasoning === true;
    }

    /** The reasoning's tokens, for usage: 0 when the output never opened a think block. */
    get reasoningTokens(): number {
        return this.reasoned ? this.beforeAnswer : 0;
    }

    /** What follows is the answer, whatever its text (the engine opened it: a call message the grammar writes). */
    answerFromHere(): void {
        this.splitter = null;
    }

    /** A sampled (or forced) token's text. */
    push(text: string): void {
        if (this.splitter == null || this.splitter.inAnswer)
            return;
        if (this.splitter.inReasoning)
            this.thinkingTokens++;
        this.beforeAnswer++;
        this.splitter.push(text);
        this.reasoned ||= this.splitter.inReasoning;
    }
}
