import type { ReasoningControls } from "../ChatEngine.js";
import type { Effort, ThinkingConfig } from "./MessagesWire.js";

/**
 * `thinking` (and `output_config.effort`) as the engine's reasoning controls. Pure.
 * - `enabled`: thinks within `budget_tokens` (then the engine closes the thought and the answer begins);
 * - `adaptive` and `between_tools`: thinks, no fixed budget (the model decides how long, as Anthropic's adaptive
 *   thinking; `max_tokens` and the context still bound it);
 * - `disabled`: no thinking;
 * - absent: the model's default (a thinking model thinks).
 * `effort` sets no budget: it reaches a template that reads one (gpt-oss's "Reasoning: low|medium|high").
 */
export function toReasoning(thinking: ThinkingConfig | undefined, effort?: Effort | null): ReasoningControls | null {
    if (thinking?.type === "disabled")
        return {enabled: false, budgetTokens: null};
    if (thinking == null && effort == null)
        return null;
    const budgetTokens = thinking?.type === "enabled" ? thinking.budget_tokens : null;
    return {enabled: true, budgetTokens, ...(effort != null ? {effort} : {})};
}

/** What `display` says about the thinking's text: `omitted` keeps it out of the answer (its block and signature stay). */
export function thinkingDisplay(thinking: ThinkingConfig | undefined): "returned" | "omitted" {
    return thinking != null && "display" in thinking && thinking.display === "omitted" ? "omitted" : "returned";
}
