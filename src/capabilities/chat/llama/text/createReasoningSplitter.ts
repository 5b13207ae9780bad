import { HarmonySplitter } from "./HarmonySplitter.js";
import type { ReasoningFormat } from "../../ChatEngine.js";
import type { ReasoningSplitter } from "./ReasoningSplitter.js";
import { ThinkSplitter } from "./ThinkSplitter.js";

/** The splitter of a reasoning format; `startsInReasoning`: the prompt opened the reasoning already. */
export function createReasoningSplitter(format: ReasoningFormat, startsInReasoning: boolean): ReasoningSplitter {
    return format === "harmony" ? new HarmonySplitter(startsInReasoning) : new ThinkSplitter(startsInReasoning);
}
