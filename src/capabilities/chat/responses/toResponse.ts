import type { ChoiceResult, TokenLogprob } from "../ChatEngine.js";
import type { ToolIdentity } from "./offeredTools.js";
import type { OutputItem, OutputLogprob, ResponseCreateRequest, ResponseObject, ResponseUsage, ResponseWarning, TextFormat } from "./ResponsesWire.js";

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

/** `incomplete_details` of a response with this status: the only cut this server makes is `max_output_tokens`. */
export function incompleteDetails(status: ResponseObject["status"]): ResponseObject["incomplete_details"] {
    return status === "incomplete" ? {reason: "max_output_tokens"} : null;
}

/** The response object: the request's settings as OpenAI echoes them, the output and usage once done. Pure. */
export function toResponse(id: string, createdAt: number, model: string, request: ResponseCreateRequest, result: {
    status: ResponseObject["status"], output: OutputItem[], usage: ResponseUsage | null, warnings?: readonly ResponseWarning[]
}): ResponseObject {
    return {
        id, object: "response", created_at: createdAt, status: result.status, error: null,
        incomplete_details: incompleteDetails(result.status),
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
