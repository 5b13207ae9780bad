import type { ToolCallFormat } from "../ChatEngine.js";
import { deepSeekV31CallFormat, isDeepSeekV31Template } from "./deepseekCalls.js";
import { gemma4CallFormat, isGemma4Template } from "./gemma4Arguments.js";
import { jsonListCallFormat } from "./jsonListCalls.js";
import { isKimiTemplate, kimiCallFormat } from "./kimiCalls.js";
import { isMistralCallIdTemplate, mistralCallIdFormat } from "./mistralCalls.js";
import { isLfm2Template, pythonListCallFormat } from "./pythonCalls.js";
import { isSeedTemplate, seedCallBase } from "./seedCalls.js";
import { harmonyCallFormat, isHarmonyTemplate } from "./text/harmonyCalls.js";

/**
 * The call format of a template whose calls node-llama-cpp does not detect, or detects otherwise than its model writes
 * them, recognised by its text as llama.cpp's handlers recognise them: gpt-oss's harmony, Gemma 4's, Mistral Small
 * 3.2's with call ids, LFM2's, Kimi-K2's, DeepSeek-V3.1's, the JSON lists (Nemotron-Nano-v2's, Apriel's), Seed-OSS's
 * outer markup (its arguments' markup read from the template: {@link derivesArgumentMarkup}); null for others
 * (node-llama-cpp's detection, and for markup formats what ChatPromptRenderer reads from the template).
 */
export function knownCallFormat(template: string): ToolCallFormat | null {
    return isHarmonyTemplate(template) ? harmonyCallFormat : isGemma4Template(template) ? gemma4CallFormat
        : isMistralCallIdTemplate(template) ? mistralCallIdFormat : isLfm2Template(template) ? pythonListCallFormat
        : isKimiTemplate(template) ? kimiCallFormat : isDeepSeekV31Template(template) ? deepSeekV31CallFormat
        : isSeedTemplate(template) ? seedCallBase : jsonListCallFormat(template);
}

/** A known format that is only a call's outer markup: its arguments' markup is read from the template's renderings. */
export function derivesArgumentMarkup(format: ToolCallFormat): boolean {
    return format === seedCallBase;
}
