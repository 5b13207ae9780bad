import type { ChoiceResult, GeneratedToolCall, TokenLogprob } from "../ChatEngine.js";
import { customToolInput, type ToolIdentity } from "./offeredTools.js";
import { encryptedContentOf } from "./reasoningContent.js";
import type {
    OutputCustomToolCall, OutputFunctionCall, OutputItem, OutputLogprob, OutputMessage, OutputReasoning, ResponseCreateRequest, ResponseObject,
    ResponseUsage, ResponseWarning, TextFormat
} from "./ResponsesWire.js";

export type ResponseIds = {response: string, message: string, reasoning: string, call: (index: number, kind: ToolIdentity["kind"]) => {id: string, callId: string}};

/** What the output items depend on besides the choice: the offered tools by model name, and what `include` asks for. */
export type OutputOptions = {tools: ReadonlyMap<string, ToolIdentity>, encryptedReasoning: boolean, logprobs: boolean};

export function toUsage(promptTokens: number, choice: Pick<ChoiceResult, "completionTokens" | "cachedPromptTokens" | "reasoningTokens">): ResponseUsage {
    return {
        input_tokens: promptTokens, input_tokens_details: {cached_tokens: choice.cachedPromptTokens ?? 0, cache_write_tokens: 0},
        output_tokens: choice.completionTokens, output_tokens_details: {reasoning_tokens: choice.reasoningTokens ?? 0},
        total_tokens: promptTokens + choice.completionTokens
    };
}

/** `output_text`'s logprobs: one entry per token of the text, with its alternatives (`bytes` as the engine read them). */
export function toOutputLogprobs(entries: readonly TokenLogprob[] | undefined): OutputLogprob[] {
    return (entries ?? []).map((entry) => ({
        token: entry.token, bytes: entry.bytes, logprob: entry.logprob,
        top_logprobs: entry.topLogprobs.map((top) => ({token: top.token, bytes: top.bytes, logprob: top.logprob}))
    }));
}

/** A thinking model's reasoning item (its `encrypted_content` when asked for). */
export function toReasoningItem(id: string, text: string, status: OutputReasoning["status"], encrypted: boolean): OutputReasoning {
    return {
        type: "reasoning", id, summary: [{type: "summary_text", text}], content: [{type: "reasoning_text", text}],
        ...(encrypted ? {encrypted_content: encryptedContentOf(text)} : {}), status
    };
}

/** A call the model made, as the item its tool's kind gives: a `function_call` (with its namespace) or a `custom_tool_call` (its input). */
export function toCallItem(ids: {id: string, callId: string}, call: GeneratedToolCall, identity: ToolIdentity | undefined): OutputFunctionCall | OutputCustomToolCall {
    const namespace = identity?.namespace != null ? {namespace: identity.namespace} : {};
    if (identity?.kind === "custom")
        return {type: "custom_tool_call", id: ids.id, call_id: ids.callId, name: identity.name, ...namespace, input: customToolInput(call.arguments), status: "completed"};
    return {type: "function_call", id: ids.id, call_id: ids.callId, name: identity?.name ?? call.name, ...namespace, arguments: call.arguments, status: "completed"};
}

/**
 * The output items of a finished choice: a thinking model's reasoning item, its text as a message item (when
 * there is text), then one call item per call.
 */
export function toOutputItems(ids: ResponseIds, choice: ChoiceResult, options: OutputOptions): OutputItem[] {
    const items: OutputItem[] = [];
    const incomplete = choice.finishReason === "length";
    if (choice.reasoning != null) {
        // Cut by max_output_tokens before the answer began: the reasoning itself is what is incomplete.
        const cut = incomplete && choice.text === "" && (choice.toolCalls ?? []).length === 0;
        items.push(toReasoningItem(ids.reasoning, choice.reasoning, cut ? "incomplete" : "completed", options.encryptedReasoning));
    }
    if (choice.text !== "" || (choice.toolCalls ?? []).length === 0) {
        const message: OutputMessage = {type: "message", id: ids.message, status: incomplete ? "incomplete" : "completed", role: "assistant",
            content: [{type: "output_text", text: choice.text, annotations: [], logprobs: options.logprobs ? toOutputLogprobs(choice.logprobs) : []}]};
        items.push(message);
    }
    for (const [index, call] of (choice.toolCalls ?? []).entries()) {
        const identity = options.tools.get(call.name);
        items.push(toCallItem(ids.call(index, identity?.kind ?? "function"), call, identity));
    }
    return items;
}

/** The response object: the request's settings as OpenAI echoes them, the output and usage once done. Pure. */
export function toResponse(id: string, createdAt: number, model: string, request: ResponseCreateRequest, result: {
    status: ResponseObject["status"], output: OutputItem[], usage: ResponseUsage | null, warnings?: readonly ResponseWarning[]
}): ResponseObject {
    return {
        id, object: "response", created_at: createdAt, status: result.status, error: null,
        incomplete_details: result.status === "incomplete" ? {reason: "max_output_tokens"} : null,
        model, instructions: request.instructions ?? null, output: result.output,
        parallel_tool_calls: request.parallel_tool_calls ?? true,
        temperature: request.temperature ?? 1, top_p: request.top_p ?? 1,
        tool_choice: request.tool_choice ?? "auto",
        tools: request.tools ?? [],
        text: {format: request.text?.format ?? {type: "text"} as TextFormat, ...(request.text?.verbosity != null ? {verbosity: request.text.verbosity} : {})},
        max_output_tokens: request.max_output_tokens ?? null,
        previous_response_id: request.previous_response_id ?? null,
        reasoning: {effort: request.reasoning?.effort ?? null, summary: request.reasoning?.summary ?? null},
        store: request.store !== false,
        metadata: request.metadata ?? {},
        ...(request.prompt_cache_key != null ? {prompt_cache_key: request.prompt_cache_key} : {}),
        ...(request.user != null ? {user: request.user} : {}),
        usage: result.usage,
        ...(result.warnings != null && result.warnings.length > 0 ? {warnings: [...result.warnings]} : {})
    };
}
