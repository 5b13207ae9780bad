import type { ChatPromptRenderer } from "./ChatPromptRenderer.js";
import { conversationKwargs } from "./conversationPrompt.js";
import type { PromptRequest } from "./preparePrompt.js";

/**
 * Prompts the main thread renders and tokenizes itself: a few messages of a few KB, which take it a millisecond or
 * two (a round trip to the render thread would cost as much, and would wait behind a large prompt there). Measured:
 * rendering takes about 0.1-0.6 ms per message (the Jinja interpreter), tokenizing about 0.3 ms per KB.
 */
const smallChars = 16 * 1024;
const smallTurns = 32;

/**
 * Whether `request` is small enough for the main thread: its text (content, tool text, call arguments and results,
 * template variables) and messages are few, and its template variables need no new wrapper.
 */
export function isSmallPrompt(request: PromptRequest, renderer: ChatPromptRenderer): boolean {
    if (request.kind === "text")
        return request.text.length <= smallChars;
    if (request.kind === "raw") {
        const {prompt, suffix} = request.rawPrompt;
        return (typeof prompt === "string" ? prompt.length : 0) + (suffix?.length ?? 0) <= smallChars;
    }
    const {job, functions} = request;
    if (job.turns.length > smallTurns)
        return false;
    let budget = smallChars;
    const within = (value: unknown): boolean => {
        if (typeof value === "string")
            return (budget -= value.length) >= 0;
        if (value === null || typeof value !== "object")
            return true;
        for (const [key, item] of Array.isArray(value) ? value.entries() : Object.entries(value))
            if ((typeof key === "string" && !within(key)) || !within(item))
                return false;
        return true;
    };
    return job.turns.every((turn) => within(turn.content) && (turn.toolCalls == null || within(turn.toolCalls)))
        && (functions == null || within(functions))
        && within(job.templateKwargs)
        && renderer.hasWrapperFor(conversationKwargs(renderer, request.format, job));
}
