import type { ChoiceResult, ToolCallEvent } from "./ChatEngine.js";
import crypto from "node:crypto";
import type { ChatCompletionChunk, Usage, WireFinishReason, WireToolCallDelta } from "./ChatCompletionWire.js";

/** The fields every response and every chunk of one completion share. */
export type CompletionEnvelope = {id: string, created: number, model: string, systemFingerprint: string};

/**
 * `prompt_tokens` counts the prompt once whatever `n` is, so `cached_tokens` does too: the tokens
 * every choice reused (each choice runs on its own sequence, which may have kept less of the prompt).
 */
export function toUsage(promptTokens: number, choices: readonly ChoiceResult[]): Usage {
    const completion = choices.reduce((sum, choice) => sum + choice.completionTokens, 0);
    const usage: Usage = {prompt_tokens: promptTokens, completion_tokens: completion, total_tokens: promptTokens + completion};
    const cached = choices.map((choice) => choice.cachedPromptTokens);
    if (cached.length > 0 && cached.every((tokens) => tokens != null))
        usage.prompt_tokens_details = {cached_tokens: Math.min(...cached as number[])};
    // A thinking model (its output split): its reasoning's tokens, part of completion_tokens.
    if (choices.some((choice) => choice.reasoning !== undefined))
        usage.completion_tokens_details = {reasoning_tokens: choices.reduce((sum, choice) => sum + (choice.reasoningTokens ?? 0), 0)};
    return usage;
}

/** A choice's finish reason on the wire; `deprecatedFunctions`: the request used `functions` (then `function_call`). */
export function toFinishReason(finishReason: ChoiceResult["finishReason"], deprecatedFunctions: boolean): WireFinishReason {
    return deprecatedFunctions && finishReason === "tool_calls" ? "function_call" : finishReason;
}

/** `call_` + 16 random URL-safe characters. */
function toolCallId() {
    return "call_" + crypto.randomBytes(12).toString("base64url");
}

/** The streamed delta of a tool-call event: the start carries id, type and name, then argument fragments. */
export function toToolCallDelta(event: ToolCallEvent): WireToolCallDelta {
    return event.type === "call"
        ? {index: event.index, id: toolCallId(), type: "function", function: {name: event.name, arguments: ""}}
        : {index: event.index, function: {arguments: event.fragment}};
}

export function toChunk(
    envelope: CompletionEnvelope,
    choice: ChatCompletionChunk["choices"][number] | null,
    usage?: Usage | null
): ChatCompletionChunk {
    return {
        id: envelope.id,
        object: "chat.completion.chunk",
        created: envelope.created,
        model: envelope.model,
        system_fingerprint: envelope.systemFingerprint,
        choices: choice == null ? [] : [choice],
        ...(usage === undefined ? {} : {usage})
    };
}
