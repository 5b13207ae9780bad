import type { ChoiceResult, ToolCallEvent } from "./ChatEngine.js";
import crypto from "node:crypto";
import type { ChatCompletion, ChatCompletionChunk, Usage, WireFinishReason, WireToolCall, WireToolCallDelta } from "./ChatCompletionWire.js";
import { toWireLogprobs } from "./toWireLogprobs.js";

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

export function toChatCompletion(envelope: CompletionEnvelope, promptTokens: number, choices: readonly ChoiceResult[], deprecatedFunctions = false): ChatCompletion {
    return {
        id: envelope.id,
        object: "chat.completion",
        created: envelope.created,
        model: envelope.model,
        system_fingerprint: envelope.systemFingerprint,
        choices: [...choices].sort((a, b) => a.index - b.index).map((choice) => ({
            index: choice.index,
            message: withReasoning(choice, choice.toolCalls == null
                ? {role: "assistant", content: choice.text, refusal: null}
                : deprecatedFunctions
                    // One call at most (parallel_tool_calls is off for them); a further one from tool_choice auto is dropped.
                    ? {role: "assistant", content: choice.text === "" ? null : choice.text, refusal: null, function_call: choice.toolCalls[0]}
                    : {role: "assistant", content: choice.text === "" ? null : choice.text, refusal: null, tool_calls: choice.toolCalls.map(toWireToolCall)}),
            logprobs: toWireLogprobs(choice.logprobs),
            finish_reason: toFinishReason(choice.finishReason, deprecatedFunctions)
        })),
        usage: toUsage(promptTokens, choices)
    };
}

/** A thinking model's message carries `reasoning_content` (null when it did not reason), as llama-server's and DeepSeek's. */
function withReasoning<M extends object>(choice: ChoiceResult, message: M): M & {reasoning_content?: string | null} {
    return choice.reasoning === undefined ? message : {...message, reasoning_content: choice.reasoning};
}

function toWireToolCall(call: {name: string, arguments: string}): WireToolCall {
    return {id: toolCallId(), type: "function", function: {name: call.name, arguments: call.arguments}};
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
