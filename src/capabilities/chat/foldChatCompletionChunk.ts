import type { ChatCompletion, ChatCompletionChunk, Usage, WireFinishReason, WireLogprobs } from "./ChatCompletionWire.js";

/** A choice as its chunks built it so far: each field as the deltas left it (a call's parts as they came). */
type ChoiceSnapshot = {
    index: number;
    message: {
        role?: "assistant";
        content?: string;
        reasoning_content?: string;
        function_call?: {name?: string, arguments: string};
        tool_calls?: {id?: string, type?: "function", function: {name?: string, arguments: string}}[];
    };
    logprobs: WireLogprobs | null;
    finish_reason: WireFinishReason | null;
};

/** A chat completion as its chunks built it so far (foldChatCompletionChunk); `finishedCompletion` makes it the answer. */
export type ChatCompletionSnapshot = Pick<ChatCompletion, "id" | "created" | "model" | "system_fingerprint"> & {
    choices: ChoiceSnapshot[];
    usage?: Usage | null;
};

/**
 * A streamed chunk applied to the completion so far, by openai-node's rules (ChatCompletionStream's
 * `accumulateChatCompletion`): the first chunk gives the envelope; each choice is found by its `index`; `role` and
 * `finish_reason` are set, `content` and `reasoning_content` appended (the role chunk's `""` makes an empty answer
 * `""`), each tool call is found by its own `index` (`id`, `type` and `name` set, `arguments` appended), the deprecated
 * `function_call` likewise; a chunk's `logprobs.content` entries are appended; `usage` is the last chunk's. What is
 * kept is a copy: the chunk may be written later or reused. Pure but for `snapshot`, changed in place and returned.
 */
export function foldChatCompletionChunk(snapshot: ChatCompletionSnapshot | undefined, chunk: ChatCompletionChunk): ChatCompletionSnapshot {
    const folded = snapshot ?? {id: chunk.id, created: chunk.created, model: chunk.model, system_fingerprint: chunk.system_fingerprint, choices: []};
    if (chunk.usage !== undefined)
        folded.usage = chunk.usage == null ? null : structuredClone(chunk.usage);
    for (const {index, delta, logprobs, finish_reason} of chunk.choices) {
        const choice = folded.choices[index] ??= {index, message: {}, logprobs: null, finish_reason: null};
        if (logprobs != null) {
            if (choice.logprobs == null)
                choice.logprobs = {content: null, refusal: logprobs.refusal};
            if (logprobs.content != null)
                (choice.logprobs.content ??= []).push(...logprobs.content);
        }
        if (finish_reason != null)
            choice.finish_reason = finish_reason;
        const {message} = choice;
        if (delta.role != null)
            message.role = delta.role;
        if (delta.content != null)
            message.content = (message.content ?? "") + delta.content;
        if (delta.reasoning_content != null)
            message.reasoning_content = (message.reasoning_content ?? "") + delta.reasoning_content;
        if (delta.function_call != null) {
            const call = message.function_call ??= {arguments: ""};
            if (delta.function_call.name != null)
                call.name = delta.function_call.name;
            call.arguments += delta.function_call.arguments;
        }
        for (const callDelta of delta.tool_calls ?? []) {
            const call = (message.tool_calls ??= [])[callDelta.index] ??= {function: {arguments: ""}};
            if (callDelta.id != null)
                call.id = callDelta.id;
            if (callDelta.type != null)
                call.type = callDelta.type;
            if (callDelta.function.name != null)
                call.function.name = callDelta.function.name;
            call.function.arguments += callDelta.function.arguments;
        }
    }
    return folded;
}

/**
 * The answer the chunks folded to, as openai-node's `finalChatCompletion()` finishes it: `refusal` null, `content`
 * null when no text came, and when the answer is calls with no text before them (as OpenAI's message with calls);
 * `reasoning_content` only when the model reasoned (as llama-server's). A choice without its finish reason or role, a
 * call without its id or name, or no usage: the chunks are this server's own mistake, an error.
 */
export function finishedCompletion(snapshot: ChatCompletionSnapshot): ChatCompletion {
    if (snapshot.usage == null)
        throw new Error("A chat completion's chunks folded without usage");
    return {
        id: snapshot.id,
        object: "chat.completion",
        created: snapshot.created,
        model: snapshot.model,
        system_fingerprint: snapshot.system_fingerprint,
        choices: snapshot.choices.map(({index, message, logprobs, finish_reason}) => {
            if (finish_reason == null || message.role == null)
                throw new Error(`Choice ${index} of a chat completion's chunks has no ${finish_reason == null ? "finish_reason" : "role"}`);
            const calls = message.tool_calls != null || message.function_call != null;
            const content = message.content == null || (calls && message.content === "") ? null : message.content;
            return {
                index,
                message: {
                    role: message.role, content, refusal: null,
                    ...(message.function_call != null ? {function_call: namedCall(message.function_call, `${index}.function_call`)} : {}),
                    ...(message.tool_calls != null ? {tool_calls: message.tool_calls.map((call, at) => {
                        if (call.id == null || call.type == null)
                            throw new Error(`Tool call ${at} of choice ${index} has no id or type`);
                        return {id: call.id, type: call.type, function: namedCall(call.function, `${index}.tool_calls.${at}`)};
                    })} : {}),
                    ...(message.reasoning_content != null && message.reasoning_content !== "" ? {reasoning_content: message.reasoning_content} : {})
                },
                logprobs,
                finish_reason
            };
        }),
        usage: snapshot.usage
    };
}

function namedCall(call: {name?: string, arguments: string}, where: string): {name: string, arguments: string} {
    if (call.name == null)
        throw new Error(`The call at ${where} has no name`);
    return {name: call.name, arguments: call.arguments};
}
