import { HarmonySplitter } from "./HarmonySplitter.js";
import type { ReasoningFormat } from "../../ChatEngine.js";
import type { ReasoningSplitter, ReasoningStart } from "./ReasoningSplitter.js";
import { ThinkSplitter } from "./ThinkSplitter.js";

/** The splitter of a reasoning format, for output that starts at `start` (the prompt opened the reasoning already, or a call). */
export function createReasoningSplitter(format: ReasoningFormat, start: ReasoningStart): ReasoningSplitter {
    return format === "harmony" ? new HarmonySplitter(start) : new ThinkSplitter(start === "reasoning");
}
