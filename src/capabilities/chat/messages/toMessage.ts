import type { ChoiceResult } from "../ChatEngine.js";
import crypto from "node:crypto";
import type { Message, PromptUsage, StopReason, TextBlock, ThinkingBlock, ToolUseBlock, Usage } from "./MessagesWire.js";

/** Why generation stopped, in Anthropic's words. */
export function toStopReason(choice: Pick<ChoiceResult, "finishReason" | "stopSequence">): StopReason {
    if (choice.finishReason === "tool_calls")
        return "tool_use";
    if (choice.finishReason === "length")
        return "max_tokens";
    return choice.stopSequence != null ? "stop_sequence" : "end_turn";
}

/**
 * The prompt's part of `usage`: Anthropic's `input_tokens` are the tokens evaluated, the prompt cache's are
 * `cache_read_input_tokens` (nothing is written to a cache on request, so creation is 0). The same numbers go
 * in `message_start`, `message_delta` and the Message.
 */
export function promptUsage(promptTokens: number, cachedPromptTokens: number): PromptUsage {
    return {input_tokens: promptTokens - cachedPromptTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: cachedPromptTokens};
}

/** The whole usage of an answer: the prompt's, and `output_tokens` with the thinking's part of them. */
export function toUsage(prompt: PromptUsage, choice: Pick<ChoiceResult, "completionTokens" | "reasoningTokens">): Usage {
    return {...prompt, output_tokens: choice.completionTokens, output_tokens_details: {thinking_tokens: choice.reasoningTokens ?? 0}};
}

/** A tool call's id in Anthropic's style (`toolu_...`), derived from the message id and the call's index. */
export function toolUseId(messageId: string, index: number) {
    return `toolu_${messageId.slice(4)}${index.toString().padStart(2, "0")}`;
}

/**
 * A thinking block's `signature`: opaque to clients, who pass it back unchanged. Here a digest of the thinking
 * (this server does not verify blocks passed back: it drops them from the prompt, as the models' templates do).
 */
export function thinkingSignature(thinking: string): string {
    return crypto.createHash("sha256").update(thinking).digest("base64");
}

/** The whole answer as a Message: a thinking model's reasoning first as a `thinking` block (its text left out when `display` is omitted). Pure. */
export function toMessage(id: string, model: string, promptTokens: number, choice: ChoiceResult, display: "returned" | "omitted" = "returned"): Message {
    const content: (ThinkingBlock | TextBlock | ToolUseBlock)[] = [];
    if (choice.reasoning != null)
        content.push({type: "thinking", thinking: display === "omitted" ? "" : choice.reasoning, signature: thinkingSignature(choice.reasoning)});
    if (choice.text !== "" || (choice.toolCalls ?? []).length === 0)
        content.push({type: "text", text: choice.text});
    for (const [index, call] of (choice.toolCalls ?? []).entries())
        content.push({type: "tool_use", id: toolUseId(id, index), name: call.name, input: parseInput(call.arguments)});
    return {
        id, type: "message", role: "assistant", model, content,
        stop_reason: toStopReason(choice), stop_sequence: choice.stopSequence ?? null,
        usage: toUsage(promptUsage(promptTokens, choice.cachedPromptTokens ?? 0), choice)
    };
}

function parseInput(text: string): Record<string, unknown> {
    try {
        const value: unknown = JSON.parse(text);
        return value != null && typeof value === "object" && !Array.isArray(value) ? value as Record<string, unknown> : {value};
    } catch {
        return {};
    }
}
