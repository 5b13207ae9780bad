/**
 * Anthropic's Messages API on the wire (`POST /v1/messages`, `POST /v1/messages/count_tokens`): the
 * subset this server reads and writes, after the @anthropic-ai/sdk types (MessageCreateParams, Message,
 * RawMessageStreamEvent).
 */
export type TextBlock = {type: "text", text: string};
export type ToolUseBlock = {type: "tool_use", id: string, name: string, input: Record<string, unknown>};
export type ToolResultBlock = {type: "tool_result", tool_use_id: string, content?: string | TextBlock[], is_error?: boolean};
/** A thinking model's reasoning; `signature` is an opaque value (here: a digest of the thinking) clients pass back unchanged. */
export type ThinkingBlock = {type: "thinking", thinking: string, signature: string};
export type RedactedThinkingBlock = {type: "redacted_thinking", data: string};
export type ContentBlockParam = TextBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock | RedactedThinkingBlock;

export type MessageParam = {role: "user" | "assistant", content: string | ContentBlockParam[]};

export type ToolParam = {name: string, description?: string, input_schema: Record<string, unknown>};
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
    /** enabled: thinking within `budget_tokens`; adaptive / between_tools: thinking as the model likes; disabled: none; absent: the model's default. */
    thinking?: {type: "enabled", budget_tokens: number, display?: ThinkingDisplay} | {type: "adaptive", display?: ThinkingDisplay} | {type: "between_tools"} | {type: "disabled"};
    metadata?: {user_id?: string | null};
    /** Structured output: `format` constrains the answer to a JSON schema; `effort` is accepted and not used (thinking sets the reasoning). */
    output_config?: {format?: {type: "json_schema", schema: Record<string, unknown>} | null, effort?: string | null};
    stream?: boolean;
};

export type ThinkingDisplay = "summarized" | "omitted" | null;

export type CountTokensRequest = Pick<MessageCreateRequest, "model" | "messages" | "system" | "tools" | "tool_choice" | "thinking">;

export type StopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use";

export type Usage = {input_tokens: number, output_tokens: number, cache_read_input_tokens: number, cache_creation_input_tokens: number};

export type Message = {
    id: string;
    type: "message";
    role: "assistant";
    model: string;
    content: (ThinkingBlock | TextBlock | ToolUseBlock)[];
    stop_reason: StopReason | null;
    stop_sequence: string | null;
    usage: Usage;
};

export type AnthropicErrorType =
    | "invalid_request_error" | "authentication_error" | "permission_error" | "not_found_error"
    | "request_too_large" | "rate_limit_error" | "api_error" | "overloaded_error";

export type AnthropicErrorBody = {type: "error", error: {type: AnthropicErrorType, message: string}};
