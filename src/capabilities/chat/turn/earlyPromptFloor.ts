import type { EngineHost } from "../../../core/engines/EngineHost.js";
import type { RequestState } from "../../../core/http/RequestState.js";
import type { ChatEngine } from "../ChatEngine.js";
import { ContextLengthExceededError } from "../errors/ContextLengthExceededError.js";
import { isJsonObject } from "../../../core/validation/isJsonObject.js";

/**
 * Which prompt a place in a request body is surely the client text of (0: the conversation; a completions request's
 * index of its prompt), or null where it may not be rendered as text as it is (a tool's text, an assistant turn a
 * template may drop, a field the format does not render). `body` is the request as sent, not yet validated.
 */
export type PromptTextAt = (body: Readonly<Record<string, unknown>>, path: readonly (string | number)[]) => number | null;

/** A request refused by earlyPromptFloor: its engine's refusal, the prompt it is about, and its model's id. */
export type EarlyRefusal = {error: ContextLengthExceededError, prompt: number, body: Readonly<Record<string, unknown>>, model: string};

/**
 * The prompt floor (PromptTokenFloor) of a body's long strings while they are still bytes (RequestState.longStrings):
 * a request whose long prompt text alone cannot fit its model's context is refused with the error its engine's floor
 * gives (`at least N tokens`, N counting that text only: the engine's count would add the rest), and the main thread
 * never makes its 10 MB of text a string again (40 ms of new memory on this VM, in one piece, each request). Only
 * when the model is loaded already: nothing is loaded for this; otherwise, or when it fits, the request goes on as
 * usual and the engine's floor decides.
 */
export function earlyPromptFloor(engines: EngineHost, state: RequestState, textAt: PromptTextAt): EarlyRefusal | null {
    const long = state.longStrings;
    const body = long?.value;
    if (long == null || !isJsonObject(body) || typeof body.model !== "string")
        return null;
    const loaded = engines.loadedEngine<ChatEngine>(body.model, "chat");
    const engine = loaded?.engine;
    if (engine?.textTokensAtLeast == null)
        return null;
    const bytes = new Map<number, number>();
    // Its UTF-8 bytes are at least its length: the floor counts a long string so (PromptTokenFloor).
    for (const {path, length} of long.strings) {
        const prompt = textAt(body, path);
        if (prompt != null)
            bytes.set(prompt, (bytes.get(prompt) ?? 0) + length);
    }
    const {contextSize} = engine.info;
    for (const [prompt, total] of bytes) {
        const tokens = engine.textTokensAtLeast(total);
        if (tokens >= contextSize)
            return {error: new ContextLengthExceededError(contextSize, tokens, {atLeast: true}), prompt, body, model: loaded!.entry.id};
    }
    return null;
}

/**
 * Text of a conversation's messages (`list`: `messages`, `input`) of the given roles: the `content` string, or the
 * `text` of a content part of `partType`. `items`: the message items' `type` a list may give (Responses'
 * `message`; an item without one is a message too).
 */
export function messageTextAt(list: string, roles: readonly string[], partType: string, items?: string): PromptTextAt {
    return (body, path) => {
        if (path[0] !== list || typeof path[1] !== "number" || path[2] !== "content")
            return null;
        const message = (body[list] as unknown[])[path[1]];
        if (!isJsonObject(message) || !roles.includes(message.role as string) || (message.type !== undefined && message.type !== items))
            return null;
        if (path.length === 3)
            return 0;
        const part = path.length === 5 && path[4] === "text" ? (message.content as unknown[])[path[3] as number] : null;
        return isJsonObject(part) && part.type === partType ? 0 : null;
    };
}

/** The first of `places` that knows the path. */
export function eitherTextAt(...places: PromptTextAt[]): PromptTextAt {
    return (body, path) => {
        for (const place of places) {
            const prompt = place(body, path);
            if (prompt != null)
                return prompt;
        }
        return null;
    };
}

