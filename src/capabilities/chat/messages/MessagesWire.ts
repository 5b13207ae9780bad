/**
 * Anthropic's Messages API on the wire (`POST /v1/messages`, `POST /v1/messages/count_tokens`): the
 * subset this server reads and writes, after the @anthropic-ai/sdk types (MessageCreateParams, Message,
 * RawMessageStreamEvent).
 */
export type TextBlock = {type: "text", text: string};
export type ToolUseBlock = {type: "tool_use", id: string, name: string, input: Record<string, unknown>};
/** Names a tool whose definition (`defer_loading` in `tools`) the tool search that returned it loads. */
export type ToolReferenceBlock = {type: "tool_reference", tool_name: string};
export type ToolResultBlock = {type: "tool_result", tool_use_id: string, content?: string | (TextBlock | ToolReferenceBlock)[], is_error?: boolean};
/** A thinking model's reasoning; `signature` is an opaque value (here: a digest of the thinking) clients pass back unchanged. */
export type ThinkingBlock = {type: "thinking", thinking: string, signature: string};
export type RedactedThinkingBlock = {type: "redacted_thinking", data: string};
/**
 * An image: base64 data with its media type (`url` and `file` sources are refused: nothing is fetched, there is no Files API).
 * Its tag is written as a template literal: the quoted word is the images capability's task, which no file outside it says.
 */
export type ImageBlock = {
    type: "image",
    source: {type: "base64", media_type: "image/jpeg" | "image/png" | "image/gif" | "image/webp", data: string} | {type: "url", url: string} | {type: "file", file_id: string}
};
export type ContentBlockParam = TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock | RedactedThinkingBlock;

export type ConversationMessageParam = {role: "user" | "assistant", content: string | ContentBlockParam[]};
/**
 * A system message among the turns (Anthropic's `SystemMessageParam`; Claude Code sends them): its text joins the
 * system prompt. `content` may be absent when it only carries `output_config`. `clear_at: "next_user_message"`:
 * shown only until a later user turn exists.
 */
export type SystemMessageParam = {
    role: "system";
    content?: string | TextBlock[] | null;
    output_config?: {effort?: Effort | null} | null;
    clear_at?: "next_user_message" | "never" | null;
};
export type MessageParam = ConversationMessageParam | SystemMessageParam;

/** `defer_loading`: left out of the model's tools until a `tool_reference` block (a tool search's result) names it. */
export type ToolParam = {name: string, description?: string, input_schema: Record<string, unknown>, defer_loading?: boolean};
export type ToolChoice =
    | {type: "auto", disable_parallel_tool_use?: boolean}
    | {type: "any", disable_parallel_tool_use?: boolean}
    | {type: "tool", name: string, disable_parallel_tool_use?: boolean}
    | {type: "none"};

export type MessageCreateRequest = {
    model: string;
    max_tokens: number;
    messages: MessageParam[];
    system?: string | TextBlock[];
    stop_sequences?: string[];
    temperature?: number;
    top_p?: number;
    top_k?: number;
    tools?: ToolParam[];
    tool_choice?: ToolChoice;
    thinking?: ThinkingConfig;
    metadata?: {user_id?: string | null};
    /** Structured output: `format` constrains the answer to a JSON schema; `effort` reaches a template that reads one (toReasoning). */
    output_config?: {format?: {type: "json_schema", schema: Record<string, unknown>} | null, effort?: Effort | null};
    stream?: boolean;
};

/** enabled: thinking within `budget_tokens`; adaptive / between_tools: thinking as the model likes; disabled: none; absent: the model's default. */
export type ThinkingConfig =
    | {type: "enabled", budget_tokens: number, display?: ThinkingDisplay}
    | {type: "adaptive", display?: ThinkingDisplay}
    | {type: "between_tools"}
    | {type: "disabled"};

/** `summarized` (and `updates`): the thinking's text is returned; `omitted`: the block comes back with its signature and an empty text. */
export type ThinkingDisplay = "summarized" | "omitted" | "updates" | null;

export type Effort = "low" | "medium" | "high" | "xhigh" | "max";

export type CountTokensRequest = Pick<MessageCreateRequest, "model" | "messages" | "system" | "tools" | "tool_choice" | "thinking" | "output_config">;

export type StopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use";

export type PromptUsage = {input_tokens: number, cache_read_input_tokens: number, cache_creation_input_tokens: number};
/** `thinking_tokens`: the part of `output_tokens` a thinking model spent thinking. */
export type Usage = PromptUsage & {output_tokens: number, output_tokens_details: {thinking_tokens: number}};

export type ContentBlock = ThinkingBlock | TextBlock | ToolUseBlock;

export type Message = {
    id: string;
    type: "message";
    role: "assistant";
    model: string;
    content: ContentBlock[];
    stop_reason: StopReason | null;
    stop_sequence: string | null;
    usage: Usage;
};

/** A block's delta: text, a thinking's text and then its signature, a tool call's input as pieces of its JSON. */
export type ContentBlockDelta =
    | {type: "text_delta", text: string}
    | {type: "thinking_delta", thinking: string}
    | {type: "signature_delta", signature: string}
    | {type: "input_json_delta", partial_json: string};

/** A streamed Message's events (Anthropic's RawMessageStreamEvent, and `ping`); `message_start`'s message has no content yet, and the prompt's usage. */
export type MessageStreamEvent =
    | {type: "message_start", message: Omit<Message, "usage" | "content"> & {content: [], usage: PromptUsage & {output_tokens: number}}}
    | {type: "ping"}
    | {type: "content_block_start", index: number, content_block: ContentBlock}
    | {type: "content_block_delta", index: number, delta: ContentBlockDelta}
    | {type: "content_block_stop", index: number}
    | {type: "message_delta", delta: {stop_reason: StopReason, stop_sequence: string | null}, usage: Usage}
    | {type: "message_stop"};

export type AnthropicErrorType =
    | "invalid_request_error" | "authentication_error" | "permission_error" | "not_found_error"
    | "request_too_large" | "rate_limit_error" | "api_error" | "overloaded_error";

/** `T`: the error types it may be (one object type per error type, as Anthropic's SDK types them). */
export type AnthropicErrorBody<T extends AnthropicErrorType = AnthropicErrorType> = {type: "error", error: {[K in T]: {type: K, message: string}}[T], request_id: string | null};
