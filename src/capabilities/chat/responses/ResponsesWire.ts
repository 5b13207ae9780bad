import type { ReasoningEffort } from "../toReasoningControls.js";
/**
 * OpenAI's Responses API on the wire (`/v1/responses`): the subset this server reads and writes,
 * after the `openai` package's types (resources/responses).
 */
export type InputText = {type: "input_text", text: string};
export type OutputText = {type: "output_text", text: string, annotations?: unknown[], logprobs?: OutputLogprob[]};
/** Output text as this server writes it: no annotations (it cites nothing), logprobs always (empty unless asked for). */
export type WrittenOutputText = OutputText & {annotations: [], logprobs: OutputLogprob[]};
/** An image: `image_url` a base64 `data:` URL (remote URLs and `file_id` are refused); `detail` accepted. */
export type InputImage = {type: "input_image", image_url?: string | null, file_id?: string | null, detail?: "auto" | "low" | "high" | "original"};
/** A part of a message's content; `refusal` parts (an assistant's) carry their text in `refusal`; files and audio are refused. */
export type ContentPart = InputText | OutputText | {type: "refusal", refusal: string} | InputImage | {type: "input_file" | "input_audio"};
export type MessageItem = {type?: "message", id?: string, role: "user" | "assistant" | "system" | "developer", content: string | ContentPart[], status?: string};
/** `namespace`: the call is of a function inside a `namespace` tool. */
export type FunctionCallItem = {type: "function_call", id?: string, call_id: string, name: string, namespace?: string, arguments: string, status?: string};
/** A tool's output: a string, or content parts of which only text is read. */
export type ToolOutput = string | ContentPart[];
export type FunctionCallOutputItem = {type: "function_call_output", id?: string | null, call_id: string, output: ToolOutput, status?: string | null};
export type CustomToolCallItem = {type: "custom_tool_call", id?: string, call_id: string, name: string, namespace?: string, input: string, status?: string};
export type CustomToolCallOutputItem = {type: "custom_tool_call_output", id?: string, call_id: string, output: ToolOutput};
/** A reasoning item as a client sends it back: its text is restored from `content`, else `encrypted_content`, else `summary`. */
export type ReasoningItem = {
    type: "reasoning", id?: string, summary?: {type: "summary_text", text: string}[],
    content?: {type: "reasoning_text", text: string}[], encrypted_content?: string | null, status?: string
};
/** Tools made available from this point of the conversation on (Codex sends its tools this way with its default model). */
export type AdditionalToolsItem = {type: "additional_tools", id?: string | null, role?: "developer", tools: Tool[]};
export type InputItem = MessageItem | FunctionCallItem | FunctionCallOutputItem | CustomToolCallItem | CustomToolCallOutputItem | ReasoningItem | AdditionalToolsItem;
/** An item of a stored response, by its id: replaced by that item before anything reads the input (withReferencedItems). */
export type ItemReference = {type: "item_reference", id: string};

export type FunctionTool = {type: "function", name: string, description?: string | null, parameters?: Record<string, unknown> | null, strict?: boolean | null};
/** A tool whose input is free text (optionally in a grammar's format): the model writes `input`, a string. */
export type CustomTool = {
    type: "custom", name: string, description?: string,
    format?: {type: "text"} | {type: "grammar", syntax: "lark" | "regex", definition: string}
};
/** Functions and custom tools under a shared name: a call says its `namespace`. */
export type NamespaceTool = {type: "namespace", name: string, description: string, tools: (FunctionTool | CustomTool)[]};
/** Any other type: the built-in tools OpenAI runs itself (`web_search`, `file_search`, ...). */
export type BuiltInTool = {type: string};
export type Tool = FunctionTool | CustomTool | NamespaceTool | BuiltInTool;

export type ToolChoice = "auto" | "none" | "required" | {type: "function" | "custom", name: string}
    | {type: "allowed_tools", mode: "auto" | "required", tools: {type: string, name?: string}[]} | {type: string};
export type TextFormat = {type: "text"} | {type: "json_object"} | {type: "json_schema", name: string, schema: Record<string, unknown>, strict?: boolean | null, description?: string};

/** What `include` may ask for (OpenAI's ResponseIncludable); this server has items for the first two. */
export const includables = [
    "reasoning.encrypted_content", "message.output_text.logprobs",
    "file_search_call.results", "web_search_call.results", "web_search_call.action.sources", "message.input_image.image_url",
    "computer_call_output.output.image_url", "code_interpreter_call.outputs"
] as const;

export type ResponseCreateRequest = {
    model: string;
    input: string | InputItem[];
    instructions?: string | null;
    max_output_tokens?: number | null;
    temperature?: number | null;
    top_p?: number | null;
    tools?: Tool[];
    tool_choice?: ToolChoice;
    parallel_tool_calls?: boolean | null;
    /** `verbosity` is accepted and echoed; nothing steers a local model's length from it. */
    text?: {format?: TextFormat, verbosity?: "low" | "medium" | "high" | null};
    /**
     * `effort`: a thinking model's effort (toReasoningControls); `summary` is accepted (the reasoning is returned whole, as
     * reasoning_text and as the summary); `context` is accepted (the chat template decides which earlier reasoning it renders).
     */
    reasoning?: {effort?: ReasoningEffort | null, summary?: string | null, context?: string | null} | null;
    include?: (typeof includables)[number][] | null;
    top_logprobs?: number | null;
    metadata?: Record<string, string> | null;
    user?: string;
    store?: boolean | null;
    previous_response_id?: string | null;
    prompt_cache_key?: string | null;
    stream?: boolean | null;
};

/** One token of `output_text` with its alternatives, when `include` asks for `message.output_text.logprobs`. */
export type OutputLogprob = {token: string, bytes: number[], logprob: number, top_logprobs: {token: string, bytes: number[], logprob: number}[]};

export type OutputMessage = {type: "message", id: string, status: "completed" | "incomplete" | "in_progress", role: "assistant", content: WrittenOutputText[]};
export type OutputFunctionCall = {type: "function_call", id: string, call_id: string, name: string, namespace?: string, arguments: string, status: "completed" | "in_progress" | "incomplete"};
export type OutputCustomToolCall = {type: "custom_tool_call", id: string, call_id: string, name: string, namespace?: string, input: string, status: "completed" | "in_progress" | "incomplete"};
/**
 * A thinking model's reasoning, whole, twice: as `reasoning_text` content (as gpt-oss servers return it) and as the
 * `summary` (no summarizer runs: the summary is the reasoning), which clients such as the AI SDK read;
 * `encrypted_content` when `include` asks for it (reasoningContent.ts).
 */
export type OutputReasoning = {
    type: "reasoning", id: string, summary: {type: "summary_text", text: string}[], content: {type: "reasoning_text", text: string}[],
    encrypted_content?: string, status: "completed" | "incomplete" | "in_progress"
};
export type OutputItem = OutputReasoning | OutputMessage | OutputFunctionCall | OutputCustomToolCall;

export type ResponseUsage = {
    /** `cache_write_tokens`: 0, this server counts no cache writes (its prompt cache is kept as a side effect of decoding). */
    input_tokens: number; input_tokens_details: {cached_tokens: number, cache_write_tokens: number};
    output_tokens: number; output_tokens_details: {reasoning_tokens: number};
    total_tokens: number;
};

/** A note about the request the server did not follow in full (a built-in tool it dropped); not in OpenAI's types (see docs/responses.md). */
export type ResponseWarning = {type: "unsupported_tool", param: string, message: string};

export type ResponseObject = {
    id: string;
    object: "response";
    created_at: number;
    status: "completed" | "incomplete" | "in_progress" | "failed";
    error: null | {code: "server_error", message: string};
    incomplete_details: null | {reason: "max_output_tokens"};
    model: string;
    instructions: string | null;
    output: OutputItem[];
    parallel_tool_calls: boolean;
    temperature: number;
    top_p: number;
    tool_choice: ToolChoice;
    tools: Tool[];
    text: {format: TextFormat, verbosity?: "low" | "medium" | "high"};
    max_output_tokens: number | null;
    previous_response_id: string | null;
    reasoning: {effort: ReasoningEffort | null, summary: string | null};
    store: boolean;
    metadata: Record<string, string>;
    prompt_cache_key?: string;
    user?: string;
    usage: ResponseUsage | null;
    warnings?: ResponseWarning[];
};

/** Where a streamed event's item is. */
type ItemAt = {item_id: string, output_index: number};
type ReasoningText = OutputReasoning["content"][number];
type SummaryText = OutputReasoning["summary"][number];

/** The events of a streamed response, as this server writes them (each also numbered: `sequence_number`). */
export type ResponseStreamEvent =
    | {type: "response.created" | "response.in_progress" | "response.completed" | "response.incomplete" | "response.failed", response: ResponseObject}
    | {type: "response.output_item.added" | "response.output_item.done", output_index: number, item: OutputItem}
    | ItemAt & {type: "response.content_part.added" | "response.content_part.done", content_index: number, part: WrittenOutputText | ReasoningText}
    | ItemAt & {type: "response.reasoning_summary_part.added" | "response.reasoning_summary_part.done", summary_index: number, part: SummaryText}
    | ItemAt & {type: "response.reasoning_summary_text.delta", summary_index: number, delta: string}
    | ItemAt & {type: "response.reasoning_summary_text.done", summary_index: number, text: string}
    | ItemAt & {type: "response.reasoning_text.delta", content_index: number, delta: string}
    | ItemAt & {type: "response.reasoning_text.done", content_index: number, text: string}
    | ItemAt & {type: "response.output_text.delta", content_index: number, delta: string, logprobs: OutputLogprob[]}
    | ItemAt & {type: "response.output_text.done", content_index: number, text: string, logprobs: OutputLogprob[]}
    | ItemAt & {type: "response.function_call_arguments.delta", delta: string}
    | ItemAt & {type: "response.function_call_arguments.done", name: string, arguments: string}
    | ItemAt & {type: "response.custom_tool_call_input.delta", delta: string}
    | ItemAt & {type: "response.custom_tool_call_input.done", input: string};
