import type { CountTokensRequest, Effort, MessageCreateRequest, TextBlock } from "./MessagesWire.js";

/**
 * The one system prompt of a Messages request: the top-level `system`, then the text of each `role: "system"`
 * message in the order they come (Claude Code sends its environment and agent list as one), joined by blank
 * lines. Every chat template takes a system prompt first and many refuse one later, so the text joins it
 * rather than staying between the turns. An empty one is dropped; one with `clear_at: "next_user_message"` is
 * dropped once a user turn follows it. The last such message's `output_config.effort` is the effort asked for.
 * Claude Code's first system block, `x-anthropic-billing-header: cc_version=...;`, is metadata for Anthropic's
 * billing, not instructions, and it changes with every prompt: first in the prompt, it would keep the prompt
 * cache from serving the rest (thousands of tokens of system prompt and tools) to the next conversation, so it is
 * left out. `path`: the field the system prompt stands for, in errors.
 */
export function systemPrompt(request: MessageCreateRequest | CountTokensRequest): {text: string, path: string, effort: Effort | null} {
    const parts = [textOf(request.system)];
    let path = request.system != null ? "system" : null;
    let effort: Effort | null = null;
    request.messages.forEach((message, index) => {
        if (message.role !== "system")
            return;
        if (message.clear_at === "next_user_message" && request.messages.slice(index + 1).some((later) => later.role === "user"))
            return;
        parts.push(textOf(message.content));
        path ??= `messages.${index}`;
        effort = message.output_config?.effort ?? effort;
    });
    return {text: parts.filter((part) => part !== "").join("\n\n"), path: path ?? "system", effort};
}

const billingHeader = /^x-anthropic-billing-header:/;

function textOf(content: string | TextBlock[] | null | undefined): string {
    return typeof content === "string" ? content
        : (content ?? []).map((block) => block.text).filter((text) => text !== "" && !billingHeader.test(text)).join("\n\n");
}
