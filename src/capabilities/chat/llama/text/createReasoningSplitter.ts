import { HarmonySplitter } from "./HarmonySplitter.js";
import type { ReasoningFormat, ToolCallFormat } from "../../ChatEngine.js";
import type { ReasoningSplitter, ReasoningStart } from "./ReasoningSplitter.js";
import { aprielTags, gemma4Tags, hy3Tags, mistralTags, seedTags, ThinkSplitter, thinkTags, type ThinkTags } from "./ThinkSplitter.js";

/**
 * The splitter of a reasoning format, for output that starts at `start` (the prompt opened the reasoning already, or a
 * call). `readsCalls`: a harmony message addressed to a function is a call to read (else it is dropped: `tool_choice` none).
 * `callStarts`: a call starting in a think block the model never closes is the answer's (ThinkSplitter).
 */
export function createReasoningSplitter(format: ReasoningFormat, start: ReasoningStart, readsCalls = true, callStarts: readonly string[] = []): ReasoningSplitter {
    return format === "harmony" ? new HarmonySplitter(start, readsCalls) : new ThinkSplitter(start === "reasoning", tagsOf(format), callStarts);
}

/**
 * Where a call of `format` starts, for callStarts above: its prefix, and the first call's short form, where they are
 * markup (a tag or a control token's text, not JSON a thought may quote).
 */
export function thoughtEndingCallStarts(format: ToolCallFormat): string[] {
    return [format.prefix, format.firstStart].filter((start): start is string => start != null && /^[<[]/.test(start));
}

/** The tags of a format whose reasoning is a block before the answer (all but `harmony`). */
export function tagsOf(format: Exclude<ReasoningFormat, "harmony">): ThinkTags {
    return format === "gemma4" ? gemma4Tags : format === "mistral" ? mistralTags : format === "seed" ? seedTags : format === "hy3" ? hy3Tags
        : format === "apriel" ? aprielTags : thinkTags;
}
