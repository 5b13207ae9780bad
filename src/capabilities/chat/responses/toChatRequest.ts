import { ApiError } from "../../../core/http/ApiError.js";
import type { ChatCompletionRequest, WireMessage, WireToolCall } from "../ChatCompletionWire.js";
import { maxConversationItems } from "../chatCompletionSchema.js";
import type { InputItem, ResponseCreateRequest } from "./ResponsesWire.js";

/** The built-in tools of OpenAI's Responses API this server does not run: refused by name, never ignored. */
const builtInTools = ["web_search", "web_search_preview", "file_search", "code_interpreter", "computer_use", "computer_use_preview", "mcp", "image_generation", "local_shell", "shell", "apply_patch", "custom"];

/** A request's input as items (a string is one user message). */
export function inputItems(input: ResponseCreateRequest["input"]): InputItem[] {
    return typeof input === "string" ? [{type: "message", role: "user", content: input}] : input;
}

/**
 * A Responses request as the chat completions request it means (one chat path): `instructions` and
 * the conversation so far (`history`: a previous response's input and output items) before the new
 * input; message items become messages, consecutive `function_call` items one assistant message with
 * tool calls, `function_call_output` items tool messages, `reasoning` items are dropped (as the models'
 * templates drop earlier reasoning); `text.format` becomes `response_format`, `reasoning.effort` `reasoning_effort`. Pure.
 * The conversation with its history holds at most maxConversationItems messages, and as many dropped items.
 */
export function toChatRequest(request: ResponseCreateRequest, history: readonly InputItem[] = []): ChatCompletionRequest {
    for (const [index, tool] of (request.tools ?? []).entries())
        if (tool.type !== "function")
            throw ApiError.invalidRequest(builtInTools.includes(tool.type)
                ? `The built-in tool '${tool.type}' is not available on this server: only tools of type 'function' are run (by your code).`
                : `Unknown tool type '${tool.type}'; only 'function' is supported.`, `tools[${index}].type`, "unsupported_tool");
    const messages: WireMessage[] = [];
    if (request.instructions != null && request.instructions !== "")
        messages.push({role: "system", content: request.instructions});
    let calls: WireToolCall[] | null = null;
    let dropped = 0;
    const given = inputItems(request.input);
    for (const [index, item] of given.entries())
        requireFields(item, index);
    for (const item of [...history, ...given]) {
        if (item.type === "function_call") {
            if (calls == null) {
                calls = [];
                messages.push({role: "assistant", content: null, tool_calls: calls});
            }
            calls.push({id: item.call_id, type: "function", function: {name: item.name, arguments: item.arguments}});
            continue;
        }
        calls = null;
        if (item.type === "reasoning") {
            dropped++;
            continue;
        }
        if (item.type === "function_call_output") {
            messages.push({role: "tool", tool_call_id: item.call_id, content: item.output});
            continue;
        }
        const content = typeof item.content === "string" ? item.content : item.content.map((part) => part.text).join("");
        messages.push({role: item.role, content});
    }
    // The schema bounds `input`; with a previous response's conversation before it, the whole is bounded here.
    const [param, whole] = history.length > 0 ? ["previous_response_id", " with the previous response's"] : ["input", ""];
    if (messages.length > maxConversationItems)
        throw ApiError.invalidRequest(
            `The conversation holds ${messages.length} messages${whole}; at most ${maxConversationItems} are accepted.`, param);
    if (dropped > maxConversationItems)
        throw ApiError.invalidRequest(
            `The conversation holds ${dropped} reasoning items${whole}; at most ${maxConversationItems} are accepted.`, param);
    const format = request.text?.format;
    const functions = (request.tools ?? []).filter((tool) => tool.type === "function") as {name: string, description?: string | null, parameters?: Record<string, unknown> | null}[];
    const choice = request.tool_choice;
    return {
        model: request.model,
        messages,
        ...(request.max_output_tokens != null ? {max_completion_tokens: request.max_output_tokens} : {}),
        ...(request.temperature != null ? {temperature: request.temperature} : {}),
        ...(request.top_p != null ? {top_p: request.top_p} : {}),
        ...(request.user != null ? {user: request.user} : {}),
        ...(request.reasoning?.effort != null ? {reasoning_effort: request.reasoning.effort} : {}),
        ...(format == null || format.type === "text" ? {}
            : format.type === "json_object" ? {response_format: {type: "json_object"}}
                : {response_format: {type: "json_schema", json_schema: {name: format.name, schema: format.schema, strict: format.strict ?? null}}}),
        ...(functions.length > 0 ? {
            tools: functions.map((tool) => ({type: "function", function: {name: tool.name, description: tool.description ?? undefined, parameters: tool.parameters ?? {type: "object", properties: {}}}})),
            tool_choice: choice == null ? "auto" : typeof choice === "string" ? choice : {type: "function", function: {name: choice.name}},
            ...(request.parallel_tool_calls === false ? {parallel_tool_calls: false} : {})
        } : choice != null && choice !== "auto" && choice !== "none" ? {tool_choice: typeof choice === "string" ? choice : {type: "function", function: {name: choice.name}}} : {})
    };
}

/** The fields each kind of input item needs (the schema checks their types). */
function requireFields(item: InputItem, index: number) {
    const required = item.type === "function_call" ? ["call_id", "name", "arguments"] : item.type === "function_call_output" ? ["call_id", "output"]
        : item.type === "reasoning" ? [] : ["role", "content"];
    const missing = required.find((field) => (item as Record<string, unknown>)[field] == null);
    if (missing != null)
        throw ApiError.invalidRequest(`Missing required parameter: 'input[${index}].${missing}'.`, `input[${index}].${missing}`, "missing_required_parameter");
}
