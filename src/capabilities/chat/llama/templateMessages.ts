import type { ChatHistoryItem } from "node-llama-cpp";
import type { TemplateRender } from "./templateGenerationPrompt.js";

// The messages node-llama-cpp's Jinja wrapper hands a chat template, reshaped before the template renders them
// (ChatPromptRenderer's watch on the wrapper's renders), so the template gets what transformers and llama-server would give it.

/**
 * The messages with the reasoning a client sent back for each response as its `reasoning_content` (what llama-server gives
 * the template): `calls`, per response with calls in order (Gemma 4's and Qwen3's templates write it before the calls of
 * the current turn, so a tool loop keeps its thought); `answers`, per answer without calls in order (Seed-OSS's, Hy3's
 * with tools, Ling-3.0's and Magistral's templates write every response's thought; most drop a past one). Each list goes
 * to its messages where they line up with it one for one (node-llama-cpp's reply to come, a last empty assistant message,
 * is no answer sent back); else those messages are left as they are.
 */
export function withTurnReasoning(params: Record<string, unknown>, {calls, answers}: {calls: readonly (string | null)[], answers: readonly (string | null)[]},
    trims = true): Record<string, unknown> {
    const makesCalls = (message: TemplateMessage) => Array.isArray(message.tool_calls) && message.tool_calls.length > 0;
    const withCalls = withReasoningIn(params, makesCalls, calls, trims);
    return withReasoningIn(withCalls, (message) => message.role === "assistant" && !makesCalls(message), answers, trims, true);
}

/** The messages `matches` takes with `reasoning` as their reasoning, one for one, the last message aside where `replyLast` (withTurnReasoning). */
function withReasoningIn(params: Record<string, unknown>, matches: (message: TemplateMessage) => boolean, reasoning: readonly (string | null)[],
    trims: boolean, replyLast = false): Record<string, unknown> {
    if (!reasoning.some((text) => text != null) || !Array.isArray(params.messages))
        return params;
    const messages = params.messages as TemplateMessage[];
    const taken = messages.filter(matches);
    if (replyLast && taken.length === reasoning.length + 1 && taken.at(-1) === messages.at(-1))
        taken.pop();
    if (taken.length !== reasoning.length)
        return params;
    return {...params, messages: messages.map((message) => {
        const text = reasoning[taken.indexOf(message)];
        return text == null ? message : withReasoning(message, text, trims);
    })};
}

/**
 * A message with the reasoning a client sent back for it. A template whose thought is open at the response's start
 * (GLM-4.6): node-llama-cpp gives the first message of a response with text its own reasoning_content, a placeholder
 * from which it skips the template's text up to the message's text (which starts with the thought's closing markup it
 * wrote itself). The reasoning goes before it, its trailing whitespace left out where the template would trim it
 * (`trims`: trimsCallReasoning).
 */
function withReasoning(message: TemplateMessage, reasoning: string, trims: boolean): TemplateMessage {
    const own = message.reasoning_content;
    return {...message, reasoning_content: typeof own === "string" && own !== "" ? (trims ? reasoning.trimEnd() : reasoning) + own : reasoning};
}

/**
 * The messages before the last user message without the `reasoning_content` node-llama-cpp gives them (a placeholder,
 * where the template's generation prompt opens the thought, from which its wrapper cuts the template's text up to the
 * message's text, to write a thought of the response's own there): those responses carry none (keepHistoryResponsesAsGiven
 * takes their empty thoughts out), so the cut took the template's own empty think block's closing tag with it (Tencent Hy3's
 * `<think:opensource></think:opensource>` before each past answer, with tools, came out `<think:opensource>`). The template
 * then writes such a response as it writes one without reasoning.
 */
export function withoutPastReasoningPlaceholders(params: Record<string, unknown>): Record<string, unknown> {
    if (!Array.isArray(params.messages))
        return params;
    const messages = params.messages as Record<string, unknown>[];
    const lastUser = messages.findLastIndex((message) => message.role === "user");
    if (!messages.some((message, index) => index < lastUser && message.role === "assistant" && message.reasoning_content != null))
        return params;
    return {...params, messages: messages.map((message, index) => {
        if (index >= lastUser || message.role !== "assistant" || message.reasoning_content == null)
            return message;
        const {reasoning_content: _placeholder, ...rest} = message;
        return rest;
    })};
}

/**
 * The messages with their calls' ids as the model writes them, `idOf(name, index)` with the calls counted in order from
 * 0, each result's with its call's: Mistral Small 3.2's template takes only ids of 9 letters and digits (`000000001`),
 * moonshotai's Kimi-K2 names a result by its call's `functions.NAME:IDX` (node-llama-cpp's ids are `fc_1_0000`). The
 * ids are the prompt's own: a client's ids never reach a template.
 */
export function withNumberedCallIds(params: Record<string, unknown>, idOf: (name: string, index: number) => string): Record<string, unknown> {
    if (!Array.isArray(params.messages))
        return params;
    const ids = new Map<unknown, string>();
    const number = (id: unknown, name: unknown) => {
        let numbered = ids.get(id);
        if (numbered == null)
            ids.set(id, numbered = idOf(String(name ?? ""), ids.size));
        return numbered;
    };
    return {...params, messages: (params.messages as Record<string, unknown>[]).map((message) => Array.isArray(message.tool_calls)
        ? {...message, tool_calls: (message.tool_calls as Record<string, unknown>[]).map((call) =>
            ({...call, id: number(call.id, (call.function as {name?: unknown} | undefined)?.name ?? call.name)}))}
        : message.role === "tool" && message.tool_call_id != null ? {...message, tool_call_id: number(message.tool_call_id, message.name)} : message)};
}

/**
 * The messages again with no `name` on a tool result: node-llama-cpp gives each its function's name, which no OpenAI client
 * sends (a tool message is `tool_call_id` and `content`), and Kimi-K2's templates write a result's role as its name when
 * it has one (`message.get('name') or message['role']`): `get_weather` where the client's messages render `tool`.
 */
export function withoutToolNames(params: Record<string, unknown>): Record<string, unknown> {
    return withMessagesChanged(params, (message) => message.role === "tool" && message.name != null, ({name: _name, ...rest}) => rest);
}

type TemplateMessage = Record<string, unknown>;

/** The render's variables again with each message `matches` takes changed by `change`; the same object where none matches. */
function withMessagesChanged(params: Record<string, unknown>, matches: (message: TemplateMessage) => boolean,
    change: (message: TemplateMessage) => TemplateMessage): Record<string, unknown> {
    if (!Array.isArray(params.messages) || !params.messages.some(matches))
        return params;
    return {...params, messages: params.messages.map((message: TemplateMessage) => matches(message) ? change(message) : message)};
}

/** The render gave the template messages with calls (not node-llama-cpp's fallback, which writes them into the text). */
export function rendersCalls(render: TemplateRender | null): boolean {
    return Array.isArray(render?.params.messages) && (render.params.messages as {tool_calls?: unknown}[]).some((message) => Array.isArray(message.tool_calls));
}

/**
 * node-llama-cpp ends each response with its text after the calls, an assistant message even where that is empty: after an
 * earlier response that ended with a call (a tool loop the user interrupted; Claude Code's tool results with a text block)
 * every template renders it as an empty assistant turn the client never sent, and gpt-oss's as an empty final answer, for
 * which it drops the call's analysis before it, so node-llama-cpp's check failed and it wrote the conversation in its own
 * format. Per earlier response with calls, in order: whether that message is empty.
 */
export function emptyTailsOf(history: readonly ChatHistoryItem[]): boolean[] {
    return history.slice(0, -1).flatMap((item) => {
        if (item.type !== "model")
            return [];
        const lastCall = item.response.findLastIndex((piece) => typeof piece !== "string" && piece.type === "functionCall");
        return lastCall === -1 ? [] : [item.response.slice(lastCall + 1).every((piece) => piece === "")];
    });
}

/**
 * The messages without the empty messages emptyTailsOf finds (the assistant message after a response's last tool result),
 * their placeholder (the empty text) moved to the start of the next message, where node-llama-cpp's check finds it.
 */
export function withoutEmptyTails(params: Record<string, unknown>, emptyTails: readonly boolean[]): Record<string, unknown> {
    if (emptyTails.length === 0 || !Array.isArray(params.messages))
        return params;
    const messages = [...params.messages as Record<string, unknown>[]];
    let tail = 0;
    for (let index = 1; index < messages.length - 1 && tail < emptyTails.length; index++) {
        const message = messages[index];
        if (message.role !== "assistant" || messages[index - 1].role !== "tool" || (Array.isArray(message.tool_calls) && message.tool_calls.length > 0))
            continue;
        const next = messages[index + 1];
        if (emptyTails[tail++] && typeof message.content === "string" && typeof next.content === "string" && next.role !== "assistant") {
            messages.splice(index, 2, {...next, content: message.content + next.content});
            index--;
        }
    }
    return {...params, messages};
}

/**
 * A template's rendering of a conversation whose last message is the empty reply to come (node-llama-cpp's wrapper renders
 * the reply as a message): the messages before it with the generation prompt, then the reply's placeholder, where the
 * wrapper cuts the text (withGenerationPrompt then finds the generation prompt already in place), as transformers and
 * llama-server render a conversation. Rendered as a message, the reply changes what the template makes of the messages
 * before it: gpt-oss's takes it for a final answer and drops the analysis before a call in the response in progress;
 * Kimi-K2-Thinking's keeps a tool loop's reasoning only after the last answer without calls, which the reply was;
 * Mistral-Nemo's writes the system message into the last user message only when that message ends the list. Null when
 * the last message is not such a reply.
 */
export function replyRender(params: Record<string, unknown>, render: (params: Record<string, unknown>) => string): string | null {
    const messages = params.messages;
    const reply = Array.isArray(messages) ? messages.at(-1) as {role?: unknown, content?: unknown, reasoning_content?: unknown, tool_calls?: unknown} | undefined : undefined;
    if (reply?.role !== "assistant" || typeof reply.content !== "string" || reply.tool_calls != null || params.add_generation_prompt === true)
        return null;
    // Where the template's generation prompt opens the thought (GLM-4.6's, Hy3's), node-llama-cpp moves the reply's placeholder to its `reasoning_content`.
    const placeholder = reply.content === "" && typeof reply.reasoning_content === "string" ? reply.reasoning_content : reply.content;
    return render({...params, messages: (messages as unknown[]).slice(0, -1), add_generation_prompt: true}) + placeholder;
}

/** The messages again with `content` for each assistant message with tool calls and no text. */
export function withCallsOnlyContent(params: Record<string, unknown>, content: null | ""): Record<string, unknown> {
    return withMessagesChanged(params, (message) => message.content == null && Array.isArray(message.tool_calls), (message) => ({...message, content}));
}

/**
 * The messages again with each assistant message's calls written after its text by `write` (in the model's own format),
 * for a template that does not write `tool_calls` (LFM2's: the calls are part of the model's message there). The calls
 * stay in the message as well, so its results still render as the results of calls.
 */
export function withCallsInText(params: Record<string, unknown>, write: (calls: {name: string, arguments: unknown}[]) => string): Record<string, unknown> {
    const withCalls = (message: TemplateMessage) => message.role === "assistant" && Array.isArray(message.tool_calls) && message.tool_calls.length > 0;
    return withMessagesChanged(params, withCalls, (message) => {
        const calls = (message.tool_calls as {function?: {name?: unknown, arguments?: unknown}}[]).map((call) => ({
            name: String(call.function?.name ?? ""), arguments: parsedArguments(call.function?.arguments)
        }));
        return {...message, content: (typeof message.content === "string" ? message.content : "") + write(calls)};
    });
}

/** A call's arguments as an object: node-llama-cpp hands them over as one, or as its JSON text. */
function parsedArguments(args: unknown): unknown {
    if (typeof args !== "string")
        return args;
    try {
        return JSON.parse(args);
    } catch {
        return args;
    }
}

/**
 * The messages again with each `reasoning_content` also as `thinking`, the field LFM2.5's template reads a response's
 * thought from (llama.cpp's LFM2 handler copies it the same way).
 */
export function withReasoningAsThinking(params: Record<string, unknown>): Record<string, unknown> {
    return withMessagesChanged(params, (message) => typeof message.reasoning_content === "string" && message.thinking == null,
        (message) => ({...message, thinking: message.reasoning_content}));
}

/**
 * The messages again with each response's `reasoning_content` as a thinking block before its text, the shape Magistral's
 * and Ministral-3's templates read a response's thought from (`content` as `[{type: "thinking", thinking}, {type: "text",
 * text}]`, written `[THINK]...[/THINK]` + text), as llama.cpp's Ministral-3 handler gives it them.
 */
export function withReasoningAsBlocks(params: Record<string, unknown>): Record<string, unknown> {
    return withMessagesChanged(params, (message) => message.role === "assistant" && typeof message.reasoning_content === "string" && message.reasoning_content !== "",
        ({reasoning_content: thinking, ...message}) => ({...message, content: [{type: "thinking", thinking},
            ...(typeof message.content === "string" && message.content !== "" ? [{type: "text", text: message.content}] : [])]}));
}
