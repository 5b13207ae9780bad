// What a chat template does with tool calls, found once per template by rendering probe conversations with its own
// renderer (unwatched): what ChatPromptRenderer then gives it.

/**
 * The `content` an assistant message with tool calls and no text needs for the template to render it, decided once per
 * template (as minja's `requires_non_null_content`), so a message renders the same way on every turn: none (node-llama-cpp
 * leaves it out), else null (what OpenAI clients send), else `""`. Qwen3's and QwQ's templates add to it and fail
 * without it, and node-llama-cpp would then fall back to writing the calls and their results into the assistant message
 * itself, where the template takes its branch for the conversation's last message (an empty think block, a line break
 * more); Functionary's tells null from text.
 */
export function callsOnlyContent(render: (params: Record<string, unknown>) => string): null | "" | undefined {
    const call = {type: "function", id: "call_0", function: {name: "get_weather", arguments: {city: "Paris"}}};
    const tools = [{type: "function", function: {name: "get_weather", description: "The weather", parameters: {type: "object", properties: {city: {type: "string"}}}}}];
    const renders = (content: null | "" | undefined) => {
        try {
            render({
                messages: [{role: "user", content: "Weather?"}, {role: "assistant", tool_calls: [call], ...(content === undefined ? {} : {content})},
                    {role: "tool", tool_call_id: "call_0", name: "get_weather", content: "sunny"}],
                tools, add_generation_prompt: true, bos_token: "", eos_token: ""
            });
            return true;
        } catch {
            return false;
        }
    };
    if (renders(undefined))
        return undefined;
    return renders(null) ? null : renders("") ? "" : undefined;
}

/** Whether the template leaves out the text of an assistant message with calls (Mistral Small 3.2's renders only the calls). */
export function dropsTextBeforeCalls(render: (params: Record<string, unknown>) => string): boolean {
    const text = "Qz7probeCallTextz7Q";
    try {
        const output = render({
            messages: [{role: "user", content: "Weather?"},
                {role: "assistant", content: text, tool_calls: [{type: "function", id: "000000001", function: {name: "get_weather", arguments: {city: "Paris"}}}]},
                {role: "tool", tool_call_id: "000000001", name: "get_weather", content: "sunny"}],
            tools: [{type: "function", function: {name: "get_weather", description: "The weather", parameters: {type: "object", properties: {city: {type: "string"}}}}}],
            add_generation_prompt: true, bos_token: "", eos_token: ""
        });
        return output.includes("get_weather") && !output.includes(text);
    } catch {
        return false;
    }
}

/**
 * Whether the template writes a tool's result as a JSON string (gpt-oss's `message.content|tojson`): node-llama-cpp's
 * wrapper hands the template a placeholder for the result, so the template encodes the placeholder, not the text.
 */
export function encodesToolResults(render: (params: Record<string, unknown>) => string): boolean {
    const result = 'q"\\n';
    try {
        const output = render({
            messages: [{role: "user", content: "Weather?"},
                {role: "assistant", content: "", tool_calls: [{type: "function", id: "call_0", function: {name: "get_weather", arguments: {city: "Paris"}}}]},
                {role: "tool", tool_call_id: "call_0", name: "get_weather", content: result}],
            tools: [{type: "function", function: {name: "get_weather", description: "The weather", parameters: {type: "object", properties: {city: {type: "string"}}}}}],
            add_generation_prompt: true, bos_token: "", eos_token: ""
        });
        return output.includes(JSON.stringify(result)) && !output.includes(result);
    } catch {
        return false;
    }
}
