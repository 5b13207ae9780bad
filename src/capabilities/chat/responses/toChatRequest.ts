import { ApiError } from "../../../core/http/ApiError.js";
import type { ChatCompletionRequest, WireContentPart, WireMessage, WireToolCall } from "../ChatCompletionWire.js";
import { maxConversationItems } from "../chatCompletionSchema.js";
import { modelToolName, toOfferedTools, type OfferedTools } from "./offeredTools.js";
import { reasoningOfItem } from "./reasoningContent.js";
import type { ContentPart, InputImage, InputItem, ResponseCreateRequest } from "./ResponsesWire.js";

/**
 * Where a chat message came from in the Responses request (`input[3]`, `instructions`, `previous_response_id` for the
 * stored conversation): `content` names the field its content came from (`output` for a tool's output), `calls` the
 * item of each of an assistant message's tool calls and the field of its arguments.
 */
export type MessageSource = {param: string, content?: "content" | "output", calls?: {param: string, arguments: "arguments" | "input"}[]};

/** The Responses field of each chat message and tool, so that errors of the chat path name what the client sent (toResponsesError). */
export type ResponsesFields = {messages: MessageSource[], tools: readonly string[]};

export type ChatMapping = {chat: ChatCompletionRequest, fields: ResponsesFields, tools: OfferedTools};

/** A request's input as items (a string is one user message). */
export function inputItems(input: ResponseCreateRequest["input"]): InputItem[] {
    return typeof input === "string" ? [{type: "message", role: "user", content: input}] : input;
}

/**
 * A Responses request as the chat completions request it means (one chat path): `instructions` and the conversation so
 * far (`history`: a stored response's input and output items) before the new input. Message items become messages;
 * consecutive `function_call` / `custom_tool_call` items one assistant message with tool calls (a custom tool's input as
 * the arguments `{"input": ...}`, a namespaced function under its model name `namespace__name`), their outputs tool
 * messages; a `reasoning` item's text (reasoningContent.ts) becomes the `reasoning_content` of the assistant message after
 * it; `additional_tools` items add their tools (offeredTools.ts). `text.format` becomes `response_format`,
 * `reasoning.effort` `reasoning_effort`, `include: ["message.output_text.logprobs"]` `logprobs`. Pure.
 * With its history, the conversation holds at most maxConversationItems messages, and as many items that make none
 * (`reasoning`, `additional_tools`): the schema bounds `input` alone.
 */
export function toChatRequest(request: ResponseCreateRequest, history: readonly InputItem[] = []): ChatMapping {
    rejectUnsupported(request as ResponseCreateRequest & Record<string, unknown>);
    const given = inputItems(request.input);
    const tools = toOfferedTools(request, history, given);
    const items = [...history.map((item) => ({item, param: "previous_response_id"})), ...given.map((item, index) => ({item, param: `input[${index}]`}))];
    checkCallsAnswered(items);

    const messages: WireMessage[] = [];
    const sources: MessageSource[] = [];
    const push = (message: WireMessage, source: MessageSource) => {
        messages.push(message);
        sources.push(source);
    };
    if (request.instructions != null && request.instructions !== "")
        push({role: "system", content: request.instructions}, {param: "instructions"});
    let calls: {list: WireToolCall[], source: NonNullable<MessageSource["calls"]>} | null = null;
    let reasoning: string | null = null;
    const takeReasoning = () => {
        const text = reasoning;
        reasoning = null;
        return text == null ? {} : {reasoning_content: text};
    };
    let unrendered = 0;
    for (const {item, param} of items) {
        if (item.type === "reasoning" || item.type === "additional_tools")
            unrendered++;
        if (item.type === "additional_tools")
            continue;
        if (item.type === "function_call" || item.type === "custom_tool_call") {
            if (calls == null) {
                calls = {list: [], source: []};
                push({role: "assistant", content: null, tool_calls: calls.list, ...takeReasoning()}, {param, calls: calls.source});
            }
            const custom = item.type === "custom_tool_call";
            calls.list.push({id: item.call_id, type: "function", function: {
                name: modelToolName(item.name, item.namespace), arguments: custom ? JSON.stringify({input: item.input}) : item.arguments
            }});
            calls.source.push({param, arguments: custom ? "input" : "arguments"});
            continue;
        }
        calls = null;
        if (item.type === "reasoning") {
            const text = reasoningOfItem(item);
            if (text != null)
                reasoning = reasoning == null ? text : `${reasoning}\n\n${text}`;
        } else if (item.type === "function_call_output" || item.type === "custom_tool_call_output") {
            reasoning = null;
            push({role: "tool", tool_call_id: item.call_id, content: toChatContent(item.output)}, {param, content: "output"});
        } else if (item.role === "assistant")
            push({role: "assistant", content: toChatContent(item.content), ...takeReasoning()}, {param});
        else {
            // Reasoning not followed by the assistant's answer has nothing to go with.
            reasoning = null;
            push({role: item.role, content: toChatContent(item.content)}, {param});
        }
    }

    const [param, whole] = history.length > 0 ? ["previous_response_id", " with the previous response's"] : ["input", ""];
    if (messages.length > maxConversationItems)
        throw ApiError.invalidRequest(`The conversation holds ${messages.length} messages${whole}; at most ${maxConversationItems} are accepted.`, param);
    if (unrendered > maxConversationItems)
        throw ApiError.invalidRequest(`The conversation holds ${unrendered} reasoning and additional_tools items${whole}; at most ${maxConversationItems} are accepted.`, param);
    const format = request.text?.format;
    const logprobs = request.include?.includes("message.output_text.logprobs") === true || request.top_logprobs != null;
    const chat: ChatCompletionRequest = {
        model: request.model,
        messages,
        ...(request.max_output_tokens != null ? {max_completion_tokens: request.max_output_tokens} : {}),
        ...(request.temperature != null ? {temperature: request.temperature} : {}),
        ...(request.top_p != null ? {top_p: request.top_p} : {}),
        ...(request.user != null ? {user: request.user} : {}),
        ...(request.reasoning?.effort != null ? {reasoning_effort: request.reasoning.effort} : {}),
        ...(logprobs ? {logprobs: true, top_logprobs: request.top_logprobs ?? 0} : {}),
        ...(format == null || format.type === "text" ? {}
            : format.type === "json_object" ? {response_format: {type: "json_object"}}
                : {response_format: {type: "json_schema", json_schema: {name: format.name, schema: format.schema, strict: format.strict ?? null}}}),
        ...(tools.tools.length > 0 ? {tools: tools.tools} : {}),
        // `auto` or `none` with no tool left (only built-in ones were given) is no choice to make.
        ...(tools.choice != null && (tools.tools.length > 0 || (tools.choice !== "auto" && tools.choice !== "none")) ? {tool_choice: tools.choice} : {}),
        ...(tools.tools.length > 0 && request.parallel_tool_calls === false ? {parallel_tool_calls: false} : {})
    };
    return {chat, fields: {messages: sources, tools: tools.sources}, tools};
}

/**
 * Text parts as chat text parts, an `input_image` of an `image_url` as a chat `image_url` part (one of a `file_id` as a
 * chat `file` part: there is no Files API here); other parts (files, audio) as themselves, which the chat path refuses by their type.
 */
function toChatContent(content: string | ContentPart[]): string | WireContentPart[] {
    if (typeof content === "string")
        return content;
    return content.map((part): WireContentPart => part.type === "input_text" || part.type === "output_text" ? {type: "text", text: part.text}
        : part.type === "refusal" ? {type: "text", text: part.refusal}
            : part.type === "input_image" ? toImagePart(part) : {type: part.type});
}

function toImagePart(part: InputImage): WireContentPart {
    if (part.image_url == null && part.file_id != null)
        return {type: "file"};
    return {type: "image_url", image_url: {url: part.image_url ?? "", ...(part.detail != null ? {detail: part.detail} : {})}};
}

/**
 * Every tool call has its output after it, before the next message, and every output a call before it (OpenAI's rule,
 * in its words; the chat path would say it in terms of messages).
 */
function checkCallsAnswered(items: readonly {item: InputItem, param: string}[]) {
    const open = new Map<string, string>();
    const unanswered = () => {
        const [callId, param] = [...open][0];
        return ApiError.invalidRequest(`No tool output found for the tool call with call_id '${callId}' (its output must come after it, before the next message).`, param);
    };
    for (const {item, param} of items) {
        if (item.type === "function_call" || item.type === "custom_tool_call")
            open.set(item.call_id, param);
        else if (item.type === "function_call_output" || item.type === "custom_tool_call_output") {
            if (!open.delete(item.call_id))
                throw ApiError.invalidRequest(`No tool call found for ${item.type} with call_id '${item.call_id}'.`, `${param}.call_id`);
        } else if (item.type !== "reasoning" && item.type !== "additional_tools" && open.size > 0)
            throw unanswered();
    }
    if (open.size > 0)
        throw unanswered();
}

/** What the Responses API has and this server does not: refused by name rather than silently ignored. */
function rejectUnsupported(request: ResponseCreateRequest & Record<string, unknown>) {
    const refuse = (param: string, what: string) => {
        throw ApiError.invalidRequest(`${what} are not supported by this server.`, param, "unsupported_parameter");
    };
    if (request.background === true)
        refuse("background", "Background responses ('background': true)");
    if (request.conversation != null)
        refuse("conversation", "Conversations ('conversation')");
    if (request.prompt != null)
        refuse("prompt", "Stored prompt templates ('prompt')");
    if (request.truncation === "auto")
        refuse("truncation", "Automatic truncation of the input ('truncation': 'auto')");
}
