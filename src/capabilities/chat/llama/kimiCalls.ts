import type { ToolCallFormat } from "../ChatEngine.js";

/**
 * Kimi-K2's calls (moonshotai's Kimi-K2, K2-Instruct, K2-Thinking), as llama.cpp reads them (common/parsers/kimi-k2.cpp):
 * `<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{...}<|tool_call_end|>...<|tool_calls_section_end|>`,
 * the calls one after another in one section, each named `functions.NAME:IDX` with IDX counting the conversation's calls
 * from 0, its arguments JSON. node-llama-cpp detected moonshotai's template with the first call's index as part of the
 * markup (a second call was text) and K2-Instruct's and K2-Thinking's not at all (a 400).
 */
export const kimiCallFormat: ToolCallFormat = {
    prefix: "<|tool_calls_section_begin|><|tool_call_begin|>functions.", paramsPrefix: "<|tool_call_argument_begin|>", suffix: "<|tool_call_end|>",
    betweenCalls: "", idMarker: ":", idPattern: "[0-9]+",
    list: {separator: "", end: "<|tool_calls_section_end|>", item: "<|tool_call_begin|>functions."}
};

/** A template that writes calls as Kimi-K2's do. */
export function isKimiTemplate(template: string): boolean {
    return ["<|tool_calls_section_begin|>", "<|tool_call_begin|>", "<|tool_call_argument_begin|>"].every((piece) => template.includes(piece));
}

/** A call's id as Kimi-K2 writes it (`functions.get_weather:0`): its results' `## Return of` names it (moonshotai's template takes the given ids). */
export function kimiCallId(name: string, index: number): string {
    return `functions.${name}:${index}`;
}
