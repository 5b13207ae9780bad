import { createReasoningSplitter } from "./createReasoningSplitter.js";
import type { ReasoningFormat } from "./ReasoningFormat.js";
import type { ReasoningSplitter } from "./ReasoningSplitter.js";

/** Where a choice's split output goes as it comes. */
export type ReasoningSink = {reasoning: (text: string) => void, content: (text: string) => void};

/**
 * A choice's output on its way out of a chat engine: for a thinking model, split into its reasoning and
 * its answer (ThinkSplitter, HarmonySplitter) and handed to the two sinks as it streams; for another model, all answer.
 * Shared by every engine, so each wire format only reads `reasoning` and the answer apart.
 */
export class ReasoningOutput {
    private readonly splitter: ReasoningSplitter | null;
    private reasoningText = "";
    private contentText = "";

    constructor(format: ReasoningFormat | null | undefined, startsInReasoning: boolean, private readonly sink: ReasoningSink) {
        this.splitter = format == null ? null : createReasoningSplitter(format, startsInReasoning);
    }

    get splits(): boolean {
        return this.splitter != null;
    }

    push(text: string): void {
        if (this.splitter == null) {
            this.emitContent(text);
            return;
        }
        this.emit(this.splitter.push(text));
    }

    /** At the end: what was held back; returns the whole answer and reasoning (null when none, undefined when not split). */
    finish(): {content: string, reasoning?: string | null} {
        if (this.splitter == null)
            return {content: this.contentText};
        this.emit(this.splitter.flush());
        const reasoning = this.reasoningText.trim();
        return {content: this.contentText, reasoning: reasoning === "" ? null : reasoning};
    }

    private emit(split: {reasoning: string, content: string}) {
        if (split.reasoning !== "") {
            this.reasoningText += split.reasoning;
            this.sink.reasoning(split.reasoning);
        }
        if (split.content !== "")
            this.emitContent(split.content);
    }

    private emitContent(text: string) {
        this.contentText += text;
        this.sink.content(text);
    }
}
