import type { ChoiceResult } from "../ChatEngine.js";
import type { FunctionTool, OutputFunctionCall, OutputItem, OutputMessage, OutputReasoning, ResponseCreateRequest, ResponseObject, ResponseUsage, TextFormat } from "./ResponsesWire.js";

export type ResponseIds = {response: string, message: string, reasoning: string, call: (index: number) => {id: string, callId: string}};

export function toUsage(promptTokens: number, choice: Pick<ChoiceResult, "completionTokens" | "cachedPromptTokens" | "reasoningTokens">): ResponseUsage {
    return {
        input_tokens: promptTokens, input_tokens_details: {cached_tokens: choice.cachedPromptTokens ?? 0},
        output_tokens: choice.completionTokens, output_tokens_details: {reasoning_tokens: choice.reasoningTokens ?? 0},
        total_tokens: promptTokens + choice.completionTokens
    };
}

/**
 * The output items of a finished choice: a thinking model's reasoning item, its text as a message item (when
 * there is text), then one function_call item per call.
 */
export function toOutputItems(ids: ResponseIds, choice: ChoiceResult): OutputItem[] {
    const items: OutputItem[] = [];
    const incomplete = choice.finishReason === "length";
    if (choice.reasoning != null) {
        // Cut by max_output_tokens before the answer began: the reasoning itself is what is incomplete.
        const cut = incomplete && choice.text === "" && (choice.toolCalls ?? []).length === 0;
        const reasoning: OutputReasoning = {
            type: "reasoning", id: ids.reasoning, status: cut ? "incomplete" : "completed",
            summary: [{type: "summary_text", text: choice.reasoning}], content: [{type: "reasoning_text", text: choice.reasoning}]
        };
        items.push(reasoning);
    }
    if (choice.text !== "" || (choice.toolCalls ?? []).length === 0) {
        const message: OutputMessage = {type: "message", id: ids.message, status: incomplete ? "incomplete" : "completed", role: "assistant",
            content: [{type: "output_text", text: choice.text, annotations: []}]};
        items.push(message);
    }
    for (const [index, call] of (choice.toolCalls ?? []).entries()) {
        const {id, callId} = ids.call(index);
        const item: OutputFunctionCall = {type: "function_call", id, call_id: callId, name: call.name, arguments: call.arguments, status: "completed"};
        items.push(item);
    }
    return items;
}

/** The response object: the request's settings as OpenAI echoes them, the output and usage once done. Pure. */
export function toResponse(id: string, createdAt: number, model: string, request: ResponseCreateRequest, result: {
    status: ResponseObject["status"], output: OutputItem[], usage: ResponseUsage | null
}): ResponseObject {
    return {
        id, object: "response", created_at: createdAt, status: result.status, error: null,
        incomplete_details: result.status === "incomplete" ? {reason: "max_output_tokens"} : null,
        model, instructions: request.instructions ?? null, output: result.output,
        parallel_tool_calls: request.parallel_tool_calls ?? true,
        temperature: request.temperature ?? 1, top_p: request.top_p ?? 1,
        tool_choice: request.tool_choice ?? "auto",
        tools: (request.tools ?? []).filter((tool): tool is FunctionTool => tool.type === "function"),
        text: {format: request.text?.format ?? {type: "text"} as TextFormat},
        max_output_tokens: request.max_output_tokens ?? null,
        previous_response_id: request.previous_response_id ?? null,
        reasoning: {effort: request.reasoning?.effort ?? null, summary: null},
        store: request.store !== false,
        metadata: request.metadata ?? {},
        ...(request.user != null ? {user: request.user} : {}),
        usage: result.usage
    };
}
