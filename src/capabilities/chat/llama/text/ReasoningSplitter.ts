import type { SplitText } from "./ThinkSplitter.js";

/**
 * Where a thinking model's output starts: inside a think block the prompt opened, undecided, in the answer (thinking
 * off), or in a call the prompt opened (a forced call in harmony: ToolCallFormat's `forcedOpening`), which is answer.
 */
export type ReasoningStart = "reasoning" | "undecided" | "answer" | "call";

/** Splits a thinking model's output, as it streams, into its reasoning and its answer (the markup reaches neither). */
export interface ReasoningSplitter {
    push(text: string): SplitText;
    /**
     * At the end: what was held back (markup that never completed) goes where it was. `ended`: the model ended its output
     * itself (an end of generation or a stop sequence, not the token limit), which closes a harmony call.
     */
    flush(ended?: boolean): SplitText;
    /** The text so far is inside the reasoning. */
    readonly inReasoning: boolean;
    /** The text so far has reached the answer (or had no reasoning). */
    readonly inAnswer: boolean;
    /** How much of the text pushed so far is held back, not yet known to be reasoning, markup or answer. */
    readonly undecided: number;
    /** What is held back may turn out to be answer (not only markup or reasoning). */
    readonly heldMayBeContent: boolean;
}
