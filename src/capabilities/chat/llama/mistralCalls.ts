import type { ToolCallFormat } from "../ChatEngine.js";

/** Mistral's calls: `[TOOL_CALLS]NAME[ARGS]{...}` (Devstral; node-llama-cpp detects it), with a call id the model writes, `[CALL_ID]` and 9 letters and digits, before `[ARGS]` (Mistral Small 3.2; it does not). */
export const mistralCallIdFormat: ToolCallFormat = {prefix: "[TOOL_CALLS]", paramsPrefix: "[ARGS]", suffix: "", betweenCalls: "", idMarker: "[CALL_ID]",
    idPattern: "[a-zA-Z0-9]{9}"};

/** A call's id as Mistral Small 3.2's template takes it: nine digits, numbered (`000000001`). */
export function mistralCallId(_name: string, index: number): string {
    return String(index + 1).padStart(9, "0");
}

/** A template that writes calls as Mistral Small 3.2's does, with their ids. */
export function isMistralCallIdTemplate(template: string): boolean {
    return ["[TOOL_CALLS]", "[CALL_ID]", "[ARGS]"].every((piece) => template.includes(piece));
}
