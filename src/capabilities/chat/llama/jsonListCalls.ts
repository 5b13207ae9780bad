import type { ToolCallFormat } from "../ChatEngine.js";

/**
 * Calls as a JSON list between two markers, one object per call, as llama.cpp reads them (tests/test-chat.cpp):
 * Nemotron-Nano-v2's `<TOOLCALL>[{"name": NAME, "arguments": {...}}, ...]</TOOLCALL>`, Apriel-1.5's
 * `<tool_calls>[{"name": NAME, "arguments": {...}}, ...]</tool_calls>` (its template adds an `"id"` after the
 * arguments: read past). node-llama-cpp detects these
 * templates' call as the object alone, its end as the first `}` (inside the arguments) and nothing of the list's
 * markers: their calls came back as text. Their templates write past calls themselves.
 */
export function jsonListCallFormat(template: string): ToolCallFormat | null {
    const item = '{"name": "';
    for (const [open, close] of [["<TOOLCALL>[", "]</TOOLCALL>"], ["<tool_calls>[", "]</tool_calls>"]])
        if (template.includes(open) && template.includes(close))
            return {prefix: open + item, paramsPrefix: '", "arguments": ', suffix: "}", betweenCalls: "", list: {separator: ",", end: close, item}};
    return null;
}
