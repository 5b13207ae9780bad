import type { SplitText } from "./ThinkSplitter.js";

/** Splits a thinking model's output, as it streams, into its reasoning and its answer (the markup reaches neither). */
export interface ReasoningSplitter {
    push(text: string): SplitText;
    /** At the end: what was held back (markup that never completed) goes where it was. */
    flush(): SplitText;
    /** The text so far is inside the reasoning. */
    readonly inReasoning: boolean;
    /** The text so far has reached the answer (or had no reasoning). */
    readonly inAnswer: boolean;
    /** How much of the text pushed so far is held back, not yet known to be reasoning, markup or answer. */
    readonly undecided: number;
}
