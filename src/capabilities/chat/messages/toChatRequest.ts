import { ApiError } from "../../../core/http/ApiError.js";
import type { ChatCompletionRequest, WireContentPart, WireMessage, WireToolCall } from "../ChatCompletionWire.js";
import type { ContentBlockParam, CountTokensRequest, Effort, MessageCreateRequest, ToolParam } from "./MessagesWire.js";
import { ClientFields, type MessageSource } from "./ClientFields.js";
import { checkToolPairing, type Turn } from "./checkToolPairing.js";
import { systemPrompt } from "./systemPrompt.js";

/** The chat request a Messages request means, the names the client used for its fields, and the effort asked for. */
export type MappedRequest = {chat: ChatCompletionRequest, fields: ClientFields, effort: Effort | null};

/**
 * A Messages request as the chat completions request it means, so it runs through the one chat path
 * (toChatJob's checks, templates, tools, grammars): `system` and the `role: "system"` messages become one
 * system message (systemPrompt); consecutive turns of one role are merged (as Anthropic does); `tool_use`
 * blocks become an assistant's `tool_calls`, `tool_result` blocks `tool` messages; `tool_choice`
 * any/tool/none map to required/a named function/none; a `defer_loading` tool is offered once a
 * `tool_reference` names it; thinking blocks are dropped (as the models' templates drop earlier reasoning), except
 * those of a turn with tool calls, which become its `reasoning_content` (the templates write it in the current turn). Pure. `fields` turns an error about the chat request back into the client's field
 * names. Fields with no chat equivalent (`top_k`, `thinking`) are applied to the job by the caller.
 */
export function toChatRequest(request: MessageCreateRequest | CountTokensRequest): MappedRequest {
    const full = request as MessageCreateRequest;
    if (full.thinking?.type === "enabled" && full.max_tokens != null && full.thinking.budget_tokens >= full.max_tokens)
        throw ApiError.invalidRequest("`max_tokens` must be greater than `thinking.budget_tokens`.", "thinking.budget_tokens");
    const named = request.tool_choice?.type === "tool" ? request.tool_choice.name : null;
    if (named != null && (request.tools ?? []).every((tool) => tool.name !== named))
        throw ApiError.invalidRequest(`Tool '${named}' not found in 'tools'.`, "tool_choice.name");

    const system = systemPrompt(request);
    const turns = mergeTurns(request.messages);
    checkToolPairing(turns);
    const messages: WireMessage[] = [];
    const sources: MessageSource[] = [];
    if (system.text !== "") {
        messages.push({role: "system", content: system.text});
        sources.push({path: system.path});
    }
    for (const turn of turns)
        for (const {message, source} of toWireMessages(turn)) {
            messages.push(message);
            sources.push(source);
        }

    const offered = offeredTools(request.tools ?? [], turns, named);
    const choice = request.tool_choice;
    const parallel = choice != null && "disable_parallel_tool_use" in choice && choice.disable_parallel_tool_use === true ? false : undefined;
    const chat: ChatCompletionRequest = {
        model: request.model,
        messages,
        ...(full.max_tokens != null ? {max_tokens: full.max_tokens} : {}),
        ...(full.stop_sequences != null && full.stop_sequences.length > 0 ? {stop: full.stop_sequences} : {}),
        ...(full.temperature != null ? {temperature: full.temperature} : {}),
        ...(full.top_p != null ? {top_p: full.top_p} : {}),
        ...(full.metadata?.user_id != null ? {user: full.metadata.user_id} : {}),
        ...(request.output_config?.format != null ? {response_format: {type: "json_schema", json_schema: {name: "output", schema: request.output_config.format.schema}}} : {}),
        ...(offered.length > 0 ? {
            tools: offered.map(({tool}) => ({type: "function", function: {name: tool.name, description: tool.description, parameters: tool.input_schema}})),
            tool_choice: choice == null || choice.type === "auto" ? "auto" : choice.type === "any" ? "required" : choice.type === "none" ? "none"
                : {type: "function", function: {name: choice.name}},
            ...(parallel === false ? {parallel_tool_calls: false} : {})
        } : {})
    };
    return {chat, fields: new ClientFields(sources, offered.map(({index}) => index)), effort: system.effort ?? request.output_config?.effort ?? null};
}

/** The conversation's user and assistant turns, consecutive turns of one role as one (their blocks in order, each with its path). */
function mergeTurns(messages: MessageCreateRequest["messages"]): Turn[] {
    const merged: Turn[] = [];
    messages.forEach((message, index) => {
        if (message.role === "system")
            return;
        const path = `messages.${index}`;
        const blocks = typeof message.content === "string"
            ? [{block: {type: "text" as const, text: message.content}, path: `${path}.content`}]
            : message.content.map((block, blockIndex) => ({block, path: `${path}.content.${blockIndex}`}));
        const last = merged.at(-1);
        if (last?.role === message.role)
            last.blocks.push(...blocks);
        else
            merged.push({role: message.role, path, blocks});
    });
    return merged;
}

/**
 * The tools the model is offered, with their index in `tools`: a `defer_loading` tool only once a `tool_reference`
 * block (a tool search's result) names it, or when `tool_choice` forces it, as Anthropic loads deferred tools.
 */
function offeredTools(tools: readonly ToolParam[], turns: readonly Turn[], forced: string | null): {tool: ToolParam, index: number}[] {
    const referenced = new Set<string>();
    for (const turn of turns)
        for (const {block} of turn.blocks)
            if (block.type === "tool_result" && Array.isArray(block.content))
                for (const part of block.content)
                    if (part.type === "tool_reference")
                        referenced.add(part.tool_name);
    return tools.map((tool, index) => ({tool, index}))
        .filter(({tool}) => tool.defer_loading !== true || referenced.has(tool.name) || tool.name === forced);
}

function toWireMessages(turn: Turn): {message: WireMessage, source: MessageSource}[] {
    const text = (blocks: Turn["blocks"]) => blocks.filter(({block}) => block.type === "text").map(({block}) => (block as {text: string}).text).join("\n\n");
    if (turn.role === "assistant") {
        const image = turn.blocks.find(({block}) => block.type === "image");
        if (image != null)
            throw ApiError.invalidRequest(`${image.path}: \`image\` blocks can only be in \`user\` messages`, image.path);
        const uses = turn.blocks.filter(({block}) => block.type === "tool_use");
        const calls: WireToolCall[] = uses.map(({block}) => {
            const use = block as Extract<ContentBlockParam, {type: "tool_use"}>;
            return {id: use.id, type: "function", function: {name: use.name, arguments: JSON.stringify(use.input)}};
        });
        const said = text(turn.blocks);
        // A turn's thinking goes to the template as its reasoning: with calls, the reasoning of those calls (templates
        // write it in the current turn, and drop it once the turn is over); without, where the template writes every
        // response's thought (Magistral's, Ministral-3's: ChatPromptRenderer decides).
        const thought = turn.blocks.filter(({block}) => block.type === "thinking").map(({block}) => (block as {thinking: string}).thinking).filter((thinking) => thinking !== "").join("\n\n");
        return [{
            message: {role: "assistant", content: calls.length > 0 && said === "" ? null : said, ...(calls.length > 0 ? {tool_calls: calls} : {}),
                ...(thought === "" ? {} : {reasoning_content: thought})},
            source: {path: turn.path, toolCalls: uses.map(({path}) => path)}
        }];
    }
    // Tool results answer the assistant's calls first; any text of the same turn follows them.
    const results = turn.blocks.filter(({block}) => block.type === "tool_result").map(({block, path}) => {
        const result = block as Extract<ContentBlockParam, {type: "tool_result"}>;
        const content = typeof result.content === "string" ? result.content
            : (result.content ?? []).map((part) => part.type === "text" ? part.text : `Tool loaded: ${part.tool_name}`).join("\n\n");
        return {message: {role: "tool" as const, tool_call_id: result.tool_use_id, content: result.is_error === true ? `Error: ${content}` : content}, source: {path}};
    });
    const said = turn.blocks.some(({block}) => block.type === "image") ? withImages(turn.blocks) : null;
    if (said != null)
        return [...results, {message: {role: "user", content: said.content}, source: {path: turn.path, parts: said.parts}}];
    const plain = text(turn.blocks);
    return [...results, ...(plain !== "" || results.length === 0 ? [{message: {role: "user" as const, content: plain}, source: {path: turn.path}}] : [])];
}

/**
 * A user turn's text and image blocks as chat content parts in their order (text blocks joined by a blank line, as
 * text-only turns are), with each part's block path. A `base64` image becomes a `data:` URL; a `url` one its URL, which
 * the chat path refuses (nothing is fetched); a `file` one is refused here (no Files API).
 */
function withImages(blocks: Turn["blocks"]): {content: WireContentPart[], parts: string[]} {
    const content: WireContentPart[] = [];
    const parts: string[] = [];
    let textBefore = false;
    for (const {block, path} of blocks) {
        if (block.type === "text") {
            content.push({type: "text", text: textBefore ? `\n\n${block.text}` : block.text});
            parts.push(path);
            textBefore = true;
        } else if (block.type === "image") {
            const source = block.source;
            if (source.type === "file")
                throw ApiError.invalidRequest(`${path}.source: image sources of type \`file\` are not supported by this server (no Files API); send the image as \`base64\``, `${path}.source`);
            const url = source.type === "base64" ? `data:${source.media_type};base64,${source.data}` : source.url;
            content.push({type: "image_url", image_url: {url}});
            parts.push(path);
        }
    }
    return {content, parts};
}
