import { ApiError } from "../../../core/http/ApiError.js";
import type { ReasoningControls } from "../ChatEngine.js";
import type { ChatCompletionRequest, WireMessage, WireToolCall } from "../ChatCompletionWire.js";
import type { ContentBlockParam, CountTokensRequest, MessageCreateRequest, MessageParam } from "./MessagesWire.js";

/**
 * A Messages request as the chat completions request it means, so it runs through the one chat path
 * (toChatJob's checks, templates, tools, grammars): `system` becomes a system message; consecutive
 * turns of one role are merged (as Anthropic does); `tool_use` blocks become an assistant's
 * `tool_calls`, `tool_result` blocks `tool` messages; `tool_choice` any/tool/none map to
 * required/a named function/none; thinking blocks of earlier turns are dropped (as the models' templates
 * drop earlier reasoning). Pure. Fields with no chat equivalent (`top_k`, `thinking`) are applied to the
 * job by the caller (toReasoning).
 */
/** `thinking` as the engine's reasoning controls: enabled within its budget, adaptive as the model likes, disabled off; absent = the model's default. */
export function toReasoning(thinking: MessageCreateRequest["thinking"]): ReasoningControls | null {
    if (thinking == null)
        return null;
    if (thinking.type === "disabled")
        return {enabled: false, budgetTokens: null};
    return {enabled: true, budgetTokens: thinking.type === "enabled" ? thinking.budget_tokens : null};
}

export function toChatRequest(request: MessageCreateRequest | CountTokensRequest): ChatCompletionRequest {
    const full = request as MessageCreateRequest;
    if (full.thinking?.type === "enabled" && full.max_tokens != null && full.thinking.budget_tokens >= full.max_tokens)
        throw ApiError.invalidRequest("`max_tokens` must be greater than `thinking.budget_tokens`.", "thinking.budget_tokens");
    const named = request.tool_choice?.type === "tool" ? request.tool_choice.name : null;
    if (named != null && (request.tools ?? []).every((tool) => tool.name !== named))
        throw ApiError.invalidRequest(`tool_choice names the tool '${named}', which is not in 'tools'.`, "tool_choice.name");
    const messages: WireMessage[] = [];
    const system = typeof request.system === "string" ? request.system : request.system?.map((block) => block.text).join("\n\n");
    if (system != null && system !== "")
        messages.push({role: "system", content: system});
    for (const turn of mergeTurns(request.messages))
        messages.push(...toWireMessages(turn));
    const choice = request.tool_choice;
    const parallel = choice != null && "disable_parallel_tool_use" in choice && choice.disable_parallel_tool_use === true ? false : undefined;
    return {
        model: request.model,
        messages,
        ...(full.max_tokens != null ? {max_tokens: full.max_tokens} : {}),
        ...(full.stop_sequences != null && full.stop_sequences.length > 0 ? {stop: full.stop_sequences} : {}),
        ...(full.temperature != null ? {temperature: full.temperature} : {}),
        ...(full.top_p != null ? {top_p: full.top_p} : {}),
        ...(full.metadata?.user_id != null ? {user: full.metadata.user_id} : {}),
        ...(full.output_config?.format != null ? {response_format: {type: "json_schema", json_schema: {name: "output", schema: full.output_config.format.schema}}} : {}),
        ...(request.tools != null && request.tools.length > 0 ? {
            tools: request.tools.map((tool) => ({type: "function", function: {name: tool.name, description: tool.description, parameters: tool.input_schema}})),
            tool_choice: choice == null || choice.type === "auto" ? "auto" : choice.type === "any" ? "required" : choice.type === "none" ? "none"
                : {type: "function", function: {name: choice.name}},
            ...(parallel === false ? {parallel_tool_calls: false} : {})
        } : {})
    };
}

/** Consecutive turns of one role become one turn (their blocks in order). */
function mergeTurns(turns: readonly MessageParam[]): {role: "user" | "assistant", blocks: ContentBlockParam[]}[] {
    const merged: {role: "user" | "assistant", blocks: ContentBlockParam[]}[] = [];
    for (const turn of turns) {
        const blocks: ContentBlockParam[] = typeof turn.content === "string" ? [{type: "text", text: turn.content}] : turn.content;
        const last = merged.at(-1);
        if (last?.role === turn.role)
            last.blocks.push(...blocks);
        else
            merged.push({role: turn.role, blocks: [...blocks]});
    }
    return merged;
}

function toWireMessages(turn: {role: "user" | "assistant", blocks: ContentBlockParam[]}): WireMessage[] {
    const text = (blocks: ContentBlockParam[]) => blocks.filter((block) => block.type === "text").map((block) => (block as {text: string}).text).join("\n\n");
    if (turn.role === "assistant") {
        const calls: WireToolCall[] = turn.blocks.filter((block) => block.type === "tool_use").map((block) => {
            const use = block as {id: string, name: string, input: Record<string, unknown>};
            return {id: use.id, type: "function", function: {name: use.name, arguments: JSON.stringify(use.input)}};
        });
        if (turn.blocks.some((block) => block.type === "tool_result"))
            throw ApiError.invalidRequest("tool_result blocks belong in user messages.", "messages");
        return [{role: "assistant", content: calls.length > 0 && text(turn.blocks) === "" ? null : text(turn.blocks), ...(calls.length > 0 ? {tool_calls: calls} : {})}];
    }
    if (turn.blocks.some((block) => block.type === "tool_use"))
        throw ApiError.invalidRequest("tool_use blocks belong in assistant messages.", "messages");
    // Tool results answer the assistant's calls first; any text of the same turn follows them.
    const results: WireMessage[] = turn.blocks.filter((block) => block.type === "tool_result").map((block) => {
        const result = block as {tool_use_id: string, content?: string | {text: string}[], is_error?: boolean};
        const content = typeof result.content === "string" ? result.content : (result.content ?? []).map((part) => part.text).join("\n\n");
        return {role: "tool", tool_call_id: result.tool_use_id, content: result.is_error === true ? `Error: ${content}` : content};
    });
    const said = text(turn.blocks);
    return [...results, ...(said !== "" || results.length === 0 ? [{role: "user" as const, content: said}] : [])];
}
