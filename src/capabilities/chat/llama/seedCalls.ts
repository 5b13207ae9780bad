import type { ToolCallFormat } from "../ChatEngine.js";

/**
 * ByteDance Seed-OSS's calls: Qwen3-Coder's markup inside `<seed:tool_call>` (`<seed:tool_call>\n<function=NAME>\n
 * <parameter=KEY>VALUE</parameter>\n</function>\n</seed:tool_call>`). node-llama-cpp's detection fails on its template (it
 * lists each tool's `parameters.properties`, which node-llama-cpp's probe tools do not have), so the call's outer markup
 * is known here (as node-llama-cpp's detection gives a markup template's: the text before the name, and after the last
 * value) and its arguments' markup is read from the template's rendering of a probe call, as for any markup template
 * (ChatPromptRenderer's markupFormat).
 */
export const seedCallBase: ToolCallFormat = {prefix: "<seed:tool_call>\n<function=", paramsPrefix: ">\n", suffix: "</parameter>\n</function>\n</seed:tool_call>", betweenCalls: "\n"};

export function isSeedTemplate(template: string): boolean {
    return template.includes("<seed:tool_call>") && template.includes("<function=");
}
