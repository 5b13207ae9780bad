import type { ReasoningEffort } from "../toReasoningControls.js";
/**
 * OpenAI's Responses API on the wire (`/v1/responses`): the subset this server reads and writes,
 * after the `openai` package's types (resources/responses).
 */
export type InputText = {type: "input_text", text: string};
export type OutputText = {type: "output_text", text: string, annotations?: unknown[]};
export type MessageItem = {type?: "message", id?: string, role: "user" | "assistant" | "system" | "developer", content: string | (InputText | OutputText)[], status?: string};
export type FunctionCallItem = {type: "function_call", id?: string, call_id: string, name: string, arguments: string, status?: string};
export type FunctionCallOutputItem = {type: "function_call_output", id?: string, call_id: string, output: string};
export type ReasoningItem = {type: "reasoning", id?: string, summary?: unknown[]};
export type InputItem = MessageItem | FunctionCallItem | FunctionCallOutputItem | ReasoningItem;

export type FunctionTool = {type: "function", name: string, description?: string | null, parameters?: Record<string, unknown> | null, strict?: boolean | null};
export type ToolChoice = "auto" | "none" | "required" | {type: "function", name: string};
export type TextFormat = {type: "text"} | {type: "json_object"} | {type: "json_schema", name: string, schema: Record<string, unknown>, strict?: boolean | null, description?: string};

export type ResponseCreateRequest = {
    model: string;
    input: string | InputItem[];
    instructions?: string | null;
    max_output_tokens?: number | null;
    temperature?: number | null;
    top_p?: number | null;
    tools?: (FunctionTool | {type: string})[];
    tool_choice?: ToolChoice;
    parallel_tool_calls?: boolean | null;
    text?: {format?: TextFormat};
    /** `effort`: a thinking model's effort (toReasoningControls); `summary` is accepted (the reasoning is returned whole, as reasoning_text). */
    reasoning?: {effort?: ReasoningEffort | null, summary?: string | null} | null;
    metadata?: Record<string, string> | null;
    user?: string;
    store?: boolean | null;
    previous_response_id?: string | null;
    stream?: boolean | null;
};

export type OutputMessage = {type: "message", id: string, status: "completed" | "incomplete" | "in_progress", role: "assistant", content: OutputText[]};
export type OutputFunctionCall = {type: "function_call", id: string, call_id: string, name: string, arguments: string, status: "completed" | "in_progress"};
/**
 * A thinking model's reasoning, whole, twice: as `reasoning_text` content (as gpt-oss servers return it) and as the
 * `summary` (no summarizer runs: the summary is the reasoning), which clients such as the AI SDK read.
 */
export type OutputReasoning = {type: "reasoning", id: string, summary: {type: "summary_text", text: string}[], content: {type: "reasoning_text", text: string}[], status: "completed" | "incomplete" | "in_progress"};
export type OutputItem = OutputReasoning | OutputMessage | OutputFunctionCall;

export type ResponseUsage = {
    input_tokens: number; input_tokens_details: {cached_tokens: number};
    output_tokens: number; output_tokens_details: {reasoning_tokens: number};
    total_tokens: number;
};

export type ResponseObject = {
    id: string;
    object: "response";
    created_at: number;
    status: "completed" | "incomplete" | "in_progress" | "failed";
    error: null | {code: string, message: string};
    incomplete_details: null | {reason: "max_output_tokens"};
    model: string;
    instructions: string | null;
    output: OutputItem[];
    parallel_tool_calls: boolean;
    temperature: number;
    top_p: number;
    tool_choice: ToolChoice;
    tools: FunctionTool[];
    text: {format: TextFormat};
    max_output_tokens: number | null;
    previous_response_id: string | null;
    reasoning: {effort: string | null, summary: null};
    store: boolean;
    metadata: Record<string, string>;
    user?: string;
    usage: ResponseUsage | null;
};
