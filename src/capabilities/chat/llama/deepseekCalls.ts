import type { ToolCallFormat } from "../ChatEngine.js";

/**
 * DeepSeek-V3.1's calls, as llama.cpp reads them (tests/test-chat.cpp):
 * `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>`, the calls one
 * after another in one section, their arguments JSON. node-llama-cpp detected the call from the middle of the section's
 * opening token (`｜><｜tool▁call▁begin｜>`), so `<｜tool▁calls▁begin` stayed in the answer's content.
 */
export const deepSeekV31CallFormat: ToolCallFormat = {
    prefix: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>", paramsPrefix: "<｜tool▁sep｜>", suffix: "<｜tool▁call▁end｜>", betweenCalls: "",
    list: {separator: "", end: "<｜tool▁calls▁end｜>", item: "<｜tool▁call▁begin｜>"}
};

/** A template that writes calls as DeepSeek-V3.1's does: the name right after the call's token (DeepSeek-R1's writes `function` there, and JSON in a code block). */
export function isDeepSeekV31Template(template: string): boolean {
    return template.includes("<｜tool▁calls▁begin｜>") && template.includes("<｜tool▁sep｜>") && !template.includes("```json");
}
