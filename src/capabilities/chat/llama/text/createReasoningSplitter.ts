import { HarmonySplitter } from "./HarmonySplitter.js";
import type { ReasoningFormat, ToolCallFormat } from "../../ChatEngine.js";
import type { ReasoningSplitter, ReasoningStart } from "./ReasoningSplitter.js";
import { gemma4Tags, ThinkSplitter, thinkTags, type ThinkTags } from "./ThinkSplitter.js";

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

/** The tags of each format whose reasoning is a block before the answer (all but `harmony`). */
const tagsByFormat: Record<Exclude<ReasoningFormat, "harmony">, ThinkTags> = {
    "think-tags": thinkTags,
    gemma4: gemma4Tags,
    // Magistral's and Ministral-3 Reasoning's (control tokens of their vocabulary; no whitespace around the thought).
    mistral: {open: "[THINK]", close: "[/THINK]"},
    seed: {open: "<seed:think>", close: "</seed:think>"},
    // Tencent Hy3's (its template writes each of its tags with `:opensource` before the `>`).
    hy3: {open: "<think:opensource>", close: "</think:opensource>"},
    // Apriel-1.6's: its template's generation prompt opens the thought with a sentence, a marker ends it.
    apriel: {open: "Here are my reasoning steps:\n", close: "[BEGIN FINAL RESPONSE]"}
};

/** The tags of a format whose reasoning is a block before the answer (all but `harmony`). */
export function tagsOf(format: Exclude<ReasoningFormat, "harmony">): ThinkTags {
    return tagsByFormat[format];
}
