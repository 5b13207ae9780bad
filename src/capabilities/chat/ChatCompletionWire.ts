import type { ReasoningEffort } from "./toReasoningControls.js";
/** OpenAI wire types of /v1/chat/completions, as far as this server reads and writes them. */
/** A content part: `text`, or `image_url` (`url` a base64 `data:` URL; `detail` accepted); others are refused by type. */
export type WireContentPart = {type: string, text?: string, image_url?: {url: string, detail?: "auto" | "low" | "high" | "original"}};

export type WireMessage = {
    role: "system" | "developer" | "user" | "assistant" | "tool" | "function";
    content?: string | WireContentPart[] | null;
    name?: string;
    tool_calls?: unknown;
    tool_call_id?: string;
    function_call?: unknown;
    /** An assistant's reasoning (llama-server's and DeepSeek's field; Responses `reasoning` items): passed to the engine on its turn. */
    reasoning_content?: string | null;
};

/** `function_call` only in answers to the deprecated `functions`. */
export type WireFinishReason = "stop" | "length" | "tool_calls" | "function_call";

export type WireToolCall = {id: string, type: "function", function: {name: string, arguments: string}};
export type WireToolCallDelta = {index: number, id?: string, type?: "function", function: {name?: string, arguments: string}};

export type ChatCompletionRequest = {
    model: string;
    messages: WireMessage[];
    frequency_penalty?: number | null;
    presence_penalty?: number | null;
    logit_bias?: Record<string, number> | null;
    logprobs?: boolean | null;
    top_logprobs?: number | null;
    max_tokens?: number | null;
    max_completion_tokens?: number | null;
    n?: number | null;
    response_format?: {type: "text" | "json_object" | "json_schema", json_schema?: {name: string, schema?: Record<string, unknown>, strict?: boolean | null, description?: string}} | null;
    seed?: number | null;
    stop?: string | string[] | null;
    stream?: boolean | null;
    stream_options?: {include_usage?: boolean} | null;
    temperature?: number | null;
    top_p?: number | null;
    tools?: unknown[] | null;
    tool_choice?: unknown;
    parallel_tool_calls?: boolean | null;
    functions?: unknown[] | null;
    function_call?: unknown;
    user?: string | null;
    /** A thinking model's effort: `none`/`minimal` = no thinking, the others a thought-token budget (toReasoningControls). */
    reasoning_effort?: ReasoningEffort | null;
    /** Extra variables for the model's chat template (llama-server's and vLLM's extension), e.g. `{"enable_thinking": false}`. */
    chat_template_kwargs?: Record<string, unknown> | null;
};

export type WireTopLogprob = {token: string, logprob: number, bytes: number[] | null};
export type WireTokenLogprob = WireTopLogprob & {top_logprobs: WireTopLogprob[]};
export type WireLogprobs = {content: WireTokenLogprob[] | null, refusal: null};

export type Usage = {
    prompt_tokens: number, completion_tokens: number, total_tokens: number,
    /** `cached_tokens`: prompt tokens served from the prompt cache (OpenAI's field). */
    prompt_tokens_details?: {cached_tokens: number},
    /** `reasoning_tokens`: a thinking model's tokens of reasoning (part of completion_tokens). */
    completion_tokens_details?: {reasoning_tokens: number}
};

export type ChatCompletion = {
    id: string;
    object: "chat.completion";
    created: number;
    model: string;
    system_fingerprint: string;
    choices: {
        index: number;
        message: {role: "assistant", content: string | null, reasoning_content?: string | null, refusal: null, tool_calls?: WireToolCall[], function_call?: {name: string, arguments: string}};
        logprobs: WireLogprobs | null;
        finish_reason: WireFinishReason;
    }[];
    usage: Usage;
};

export type ChatCompletionChunk = {
    id: string;
    object: "chat.completion.chunk";
    created: number;
    model: string;
    system_fingerprint: string;
    choices: {
        index: number;
        delta: {role?: "assistant", content?: string | null, reasoning_content?: string, tool_calls?: WireToolCallDelta[], function_call?: {name?: string, arguments: string}};
        logprobs: WireLogprobs | null;
        finish_reason: WireFinishReason | null;
    }[];
    usage?: Usage | null;
};
