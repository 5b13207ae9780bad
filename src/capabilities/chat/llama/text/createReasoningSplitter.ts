import { HarmonySplitter } from "./HarmonySplitter.js";
import type { ReasoningFormat } from "../../ChatEngine.js";
import type { ReasoningSplitter, ReasoningStart } from "./ReasoningSplitter.js";
import { gemma4Tags, ThinkSplitter, thinkTags, type ThinkTags } from "./ThinkSplitter.js";

/**
 * The splitter of a reasoning format, for output that starts at `start` (the prompt opened the reasoning already, or a
 * call). `readsCalls`: a harmony message addressed to a function is a call to read (else it is dropped: `tool_choice` none).
 */
export function createReasoningSplitter(format: ReasoningFormat, start: ReasoningStart, readsCalls = true): ReasoningSplitter {
    return format === "harmony" ? new HarmonySplitter(start, readsCalls) : new ThinkSplitter(start === "reasoning", tagsOf(format));
}

/** The tags of a format whose reasoning is a block before the answer (`think-tags`, `gemma4`). */
export function tagsOf(format: Exclude<ReasoningFormat, "harmony">): ThinkTags {
    return format === "gemma4" ? gemma4Tags : thinkTags;
}
