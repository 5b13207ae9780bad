import type { Message, MessageStreamEvent, PromptUsage, StopReason } from "./MessagesWire.js";

/**
 * A Message as its events built it so far: the message (its usage the prompt's until `message_delta`), and each
 * tool_use block's input JSON as it came (`input` is decoded from it once the block stops).
 */
export type MessageSnapshot = {
    message: Omit<Message, "usage"> & {usage: PromptUsage & Partial<Pick<Message["usage"], "output_tokens" | "output_tokens_details">>};
    inputJson: Map<number, string>;
};

/**
 * A streamed Message's event applied to the Message so far, by @anthropic-ai/sdk's rules (MessageStream's
 * `accumulateMessage`): `message_start` gives the message; `content_block_start` appends its block; a `text_delta` or
 * `thinking_delta` appends its text, a `signature_delta` sets the signature, `input_json_delta`s join to the tool
 * call's input, decoded at `content_block_stop`; `message_delta` sets the stop reason and sequence and the usage
 * fields it carries. What is kept is a copy, so the events may be written later. Pure but for `snapshot`, changed in
 * place and returned; an event out of order is this server's own mistake (an error).
 */
export function foldMessageEvent(snapshot: MessageSnapshot | undefined, event: MessageStreamEvent): MessageSnapshot {
    if (event.type === "message_start") {
        if (snapshot != null)
            throw new Error("A second message_start");
        return {message: structuredClone(event.message), inputJson: new Map()};
    }
    if (snapshot == null)
        throw new Error(`${event.type} before message_start`);
    const {message} = snapshot;
    switch (event.type) {
        case "content_block_start":
            if (event.index !== message.content.length)
                throw new Error(`content_block_start at index ${event.index}, block ${message.content.length} expected`);
            message.content.push(structuredClone(event.content_block));
            break;
        case "content_block_delta": {
            const {delta} = event;
            const block = message.content[event.index];
            if (delta.type === "text_delta" && block?.type === "text")
                block.text += delta.text;
            else if (delta.type === "thinking_delta" && block?.type === "thinking")
                block.thinking += delta.thinking;
            else if (delta.type === "signature_delta" && block?.type === "thinking")
                block.signature = delta.signature;
            else if (delta.type === "input_json_delta" && block?.type === "tool_use")
                snapshot.inputJson.set(event.index, (snapshot.inputJson.get(event.index) ?? "") + delta.partial_json);
            else
                throw new Error(`A ${delta.type} for a ${block?.type ?? "missing"} block at index ${event.index}`);
            break;
        }
        case "content_block_stop": {
            const block = message.content[event.index];
            const json = snapshot.inputJson.get(event.index);
            if (block?.type === "tool_use" && json != null)
                block.input = toolInput(json);
            break;
        }
        case "message_delta":
            message.stop_reason = event.delta.stop_reason;
            message.stop_sequence = event.delta.stop_sequence;
            message.usage = {...message.usage, ...structuredClone(event.usage)};
            break;
    }
    return snapshot;
}

/** The Message the events folded to, once `message_delta` said why it stopped and its whole usage (else an error). */
export function finishedMessage({message}: MessageSnapshot): Message {
    const {usage, stop_reason: stopReason} = message;
    if (stopReason == null || usage.output_tokens == null || usage.output_tokens_details == null)
        throw new Error("A Message's events folded without their message_delta");
    return {...message, stop_reason: stopReason satisfies StopReason, usage: {...usage, output_tokens: usage.output_tokens, output_tokens_details: usage.output_tokens_details}};
}

/** A tool call's input: its JSON object; another JSON value as `{value}`; JSON cut short (max_tokens): `{}`. */
function toolInput(json: string): Record<string, unknown> {
    try {
        const value: unknown = JSON.parse(json);
        return value != null && typeof value === "object" && !Array.isArray(value) ? value as Record<string, unknown> : {value};
    } catch {
        return {};
    }
}
