import type { ChoiceResult } from "../ChatEngine.js";
import crypto from "node:crypto";
import type { PromptUsage, StopReason, Usage } from "./MessagesWire.js";

/* The fields of a Message its events carry (MessageEvents): why it stopped, its usage, its tool calls' ids, its thinking's signature. */

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
