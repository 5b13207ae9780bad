import { LlamaText, SpecialTokensText, type JinjaTemplateChatWrapper } from "node-llama-cpp";
import type { ToolCallFormat } from "../ChatEngine.js";

// What a chat template does, found once per template (ChatPromptRenderer): with tool calls, by rendering probe
// conversations with its own renderer (unwatched) or from node-llama-cpp's detection; its generation prompt, from its text.

/**
 * The template's rendering of a probe conversation: a question, an assistant message calling `get_weather` (its `content`
 * as given, absent when undefined; its call's `id`), the call's `result`, the generation prompt; null when the template raises.
 */
function renderProbeCall(render: (params: Record<string, unknown>) => string, {content, id = "call_0", result = "sunny"}: {content?: string | null, id?: string, result?: string}): string | null {
    try {
        return render({
            messages: [{role: "user", content: "Weather?"},
                {role: "assistant", ...(content === undefined ? {} : {content}), tool_calls: [{type: "function", id, function: {name: "get_weather", arguments: {city: "Paris"}}}]},
                {role: "tool", tool_call_id: id, name: "get_weather", content: result}],
            tools: [{type: "function", function: {name: "get_weather", description: "The weather", parameters: {type: "object", properties: {city: {type: "string"}}}}}],
            add_generation_prompt: true, bos_token: "", eos_token: ""
        });
    } catch {
        return null;
    }
}

/**
 * The `content` an assistant message with tool calls and no text needs for the template to render it, decided once per
 * template (as minja's `requires_non_null_content`), so a message renders the same way on every turn: none (node-llama-cpp
 * leaves it out), else null (what OpenAI clients send), else `""`. Qwen3's and QwQ's templates add to it and fail
 * without it, and node-llama-cpp would then fall back to writing the calls and their results into the assistant message
 * itself, where the template takes its branch for the conversation's last message (an empty think block, a line break
 * more); Functionary's tells null from text.
 */
export function callsOnlyContent(render: (params: Record<string, unknown>) => string): null | "" | undefined {
    const renders = (content: null | "" | undefined) => renderProbeCall(render, {content}) != null;
    if (renders(undefined))
        return undefined;
    return renders(null) ? null : renders("") ? "" : undefined;
}

/**
 * Whether the template writes an assistant message's `tool_calls` (the call's argument appears in its rendering). LFM2's
 * and LFM2.5-Instruct's leave them out: their models' calls are part of the message's text.
 */
export function writesCalls(render: (params: Record<string, unknown>) => string): boolean {
    return renderProbeCall(render, {content: ""})?.includes("Paris") === true;
}

/** Whether the template writes a call's id into the prompt (Apriel's `"id": ...` after the arguments). */
export function writesCallIds(render: (params: Record<string, unknown>) => string): boolean {
    const id = "qz7probecallidz7q";
    return renderProbeCall(render, {content: "", id})?.includes(id) === true;
}

/** Whether the template leaves out the text of an assistant message with calls (Mistral Small 3.2's renders only the calls). */
export function dropsTextBeforeCalls(render: (params: Record<string, unknown>) => string): boolean {
    const text = "Qz7probeCallTextz7Q";
    // Ids of nine digits, as Mistral Small 3.2's template requires.
    const output = renderProbeCall(render, {content: text, id: "000000001"});
    return output != null && output.includes("get_weather") && !output.includes(text);
}

/**
 * Whether the template writes a tool's result as a JSON string (gpt-oss's `message.content|tojson`): node-llama-cpp's
 * wrapper hands the template a placeholder for the result, so the template encodes the placeholder, not the text.
 */
export function encodesToolResults(render: (params: Record<string, unknown>) => string): boolean {
    const result = 'q"\\n';
    const output = renderProbeCall(render, {content: "", result});
    return output != null && output.includes(JSON.stringify(result)) && !output.includes(result);
}

export function toolCallFormatOf(wrapper: JinjaTemplateChatWrapper): ToolCallFormat | null {
    const {call, parallelism} = wrapper.settings.functions;
    const texts = [call.prefix, call.paramsPrefix, call.suffix, parallelism?.call.betweenCalls ?? ""].map(plainText);
    if (texts.some((text) => text == null) || texts[0] === "")
        return null;
    const [prefix, paramsPrefix, suffix, betweenCalls] = texts as string[];
    return {prefix, paramsPrefix, suffix, betweenCalls};
}

/** The text of a format piece, or null when it holds a special token that is not plain text (BOS, EOS...). */
export function plainText(value: unknown): string | null {
    let text = "";
    for (const item of LlamaText(value as never).values) {
        if (typeof item === "string")
            text += item;
        else if (item instanceof SpecialTokensText)
            text += item.value;
        else
            return null;
    }
    return text;
}

/**
 * Whether the template trims the reasoning it writes for a call (GLM-4.6's does; Tencent Hy3's writes it as given):
 * from its rendering of the probe call with a reasoning that ends in line breaks. True where it writes none (nothing
 * to keep), as withTurnReasoning did for every template before.
 */
export function trimsCallReasoning(render: (params: Record<string, unknown>) => string): boolean {
    const reasoning = "probethoughtqx";
    try {
        const text = render({
            messages: [{role: "user", content: "Weather?"},
                {role: "assistant", content: "", reasoning_content: reasoning + "\n\n", tool_calls: [{type: "function", id: "call_0", function: {name: "get_weather", arguments: {city: "Paris"}}}]},
                {role: "tool", tool_call_id: "call_0", name: "get_weather", content: "sunny"}],
            tools: [{type: "function", function: {name: "get_weather", description: "The weather", parameters: {type: "object", properties: {city: {type: "string"}}}}}],
            add_generation_prompt: true, bos_token: "", eos_token: ""
        });
        return !text.includes(reasoning + "\n\n");
    } catch {
        return true;
    }
}

/** The values a template's `reasoning_effort not in [...]` check lets through (ChatPromptRenderer's effortValues). */
export function effortValuesOf(template: string): string[] | null {
    const list = /reasoning_effort\s+not\s+in\s+\[([^\]]*)\]/.exec(template)?.[1];
    const values = list == null ? [] : [...list.matchAll(/['"]([\w-]+)['"]/g)].map((match) => match[1]);
    return values.length === 0 ? null : values;
}
