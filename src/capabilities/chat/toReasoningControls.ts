import type { ReasoningControls } from "./ChatEngine.js";

/** OpenAI's `reasoning_effort` values (chat completions and the Responses API's `reasoning.effort`). */
export const reasoningEfforts = ["none", "minimal", "low", "medium", "high", "xhigh", "max"] as const;
export type ReasoningEffort = typeof reasoningEfforts[number];

/**
 * Thought-token budgets of the efforts that think: after this many tokens of reasoning the engine closes
 * the think block and the answer begins (the answer still within max_tokens and the context).
 */
const reasoningEffortBudgets: Record<Exclude<ReasoningEffort, "none" | "minimal">, number | null> = {
    low: 1024, medium: 4096, high: 16384, xhigh: 32768, max: null
};

/** `none`/`minimal`: thinking off; the others: thinking with their budget; absent: the model's default. */
export function toReasoningControls(effort: ReasoningEffort | null | undefined): ReasoningControls | null {
    if (effort == null)
        return null;
    if (effort === "none" || effort === "minimal")
        return {enabled: false, budgetTokens: null};
    return {enabled: true, budgetTokens: reasoningEffortBudgets[effort], effort};
}
