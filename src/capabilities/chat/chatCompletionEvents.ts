import type { ChatCompletion, ChatCompletionChunk } from "./ChatCompletionWire.js";
import { toChunk, toFinishReason, toToolCallDelta, toUsage, type CompletionEnvelope } from "./chatResponses.js";
import { finishedCompletion, foldChatCompletionChunk, type ChatCompletionSnapshot } from "./foldChatCompletionChunk.js";
import type { JobDone } from "./turn/runJob.js";
import type { Send, TurnStream } from "./turn/runChatTurn.js";
import { toWireLogprobs } from "./toWireLogprobs.js";

/**
 * A chat completion's stream: each choice's opening role chunk, then a chunk per engine event (a thinking model's
 * `delta.reasoning_content` before its answer's `delta.content`, tool-call deltas, or the deprecated `function_call`'s),
 * a finish chunk per choice, and the usage chunk when `includeUsage`. With logprobs asked for, a choice that had no
 * token to report (an empty answer) still has its (empty) entries, in an empty content chunk before its finish chunk.
 * `finish` returns the completion the chunks fold to (foldChatCompletionChunk) when they carry its usage: the body
 * when not streamed (asked with `includeUsage`).
 */
export function chatCompletionEvents(envelope: CompletionEnvelope, n: number, options: {deprecatedFunctions: boolean, includeUsage: boolean, logprobs: boolean}) {
    return (send: Send): TurnStream<JobDone> => {
        const usageField = options.includeUsage ? null : undefined;
        let folded: ChatCompletionSnapshot | undefined;
        const emit = (chunk: ChatCompletionChunk) => {
            folded = foldChatCompletionChunk(folded, chunk);
            send(chunk);
        };
        /** The choices whose chunks carried logprobs entries. */
        const withLogprobs = new Set<number>();
        const chunk = (choice: ChatCompletionChunk["choices"][number]) => {
            if (choice.logprobs != null)
                withLogprobs.add(choice.index);
            emit(toChunk(envelope, choice, usageField));
        };
        // Wait in the writer until the engine took the job; they go first. `content: null` as OpenAI's role chunk of a
        // tool call and llama-server's (openai-node 7 appends any non-null content, so `""` here would fold a call's
        // content to `""`); a choice that ends with neither text nor a call gets its `""` at the end.
        for (let index = 0; index < n; index++)
            chunk({index, delta: {role: "assistant", content: null}, logprobs: null, finish_reason: null});
        /** The choices that sent text or a call. */
        const answered = new Set<number>();
        return {
            hooks: () => ({
                onReasoning: (index, text) => chunk({index, delta: {reasoning_content: text}, logprobs: null, finish_reason: null}),
                onText: (index, text, logprobs) => {
                    answered.add(index);
                    chunk({index, delta: {content: text}, logprobs: toWireLogprobs(logprobs), finish_reason: null});
                },
                onToolCall: (index, event, logprobs) => {
                    answered.add(index);
                    if (!options.deprecatedFunctions)
                        chunk({index, delta: {tool_calls: [toToolCallDelta(event)]}, logprobs: toWireLogprobs(logprobs), finish_reason: null});
                    else if (event.index === 0) {
                        const functionCall = event.type === "call" ? {name: event.name, arguments: ""} : {arguments: event.fragment};
                        chunk({index, delta: {function_call: functionCall}, logprobs: toWireLogprobs(logprobs), finish_reason: null});
                    }
                },
                onFinish: (choice) => {
                    if ((options.logprobs && !withLogprobs.has(choice.index)) || !answered.has(choice.index))
                        chunk({index: choice.index, delta: {content: ""}, logprobs: options.logprobs ? toWireLogprobs([]) : null, finish_reason: null});
                    chunk({index: choice.index, delta: {}, logprobs: null, finish_reason: toFinishReason(choice.finishReason, options.deprecatedFunctions)});
                }
            }),
            finish: ({promptTokens, choices}): ChatCompletion | undefined => {
                if (!options.includeUsage)
                    return undefined;
                emit(toChunk(envelope, null, toUsage(promptTokens, choices)));
                return finishedCompletion(folded!);
            }
        };
    };
}
