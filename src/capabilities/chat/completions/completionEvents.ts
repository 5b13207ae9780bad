import type { CompletionEnvelope } from "../chatResponses.js";
import type { Send, TurnStream } from "../turn/runChatTurn.js";
import { CompletionLogprobsWriter } from "./CompletionLogprobsWriter.js";
import { toCompletionChunk, toCompletionFinishReason, toCompletionUsage, type CompletionsDone } from "./completionResponses.js";
import type { TextCompletion, TextCompletionChunk, WireCompletionChoice } from "./CompletionWire.js";
import { finishedTextCompletion, foldCompletionChunk, type TextCompletionSnapshot } from "./foldCompletionChunk.js";
import type { CompletionPlan } from "./toCompletionJobs.js";

/**
 * A legacy completion's stream: per prompt, its echo (when asked for) in each of its choices, then a chunk per piece
 * of text and a finish chunk per choice (choice k of prompt p is `index` p * n + k), and the usage chunk when
 * `includeUsage`. Logprobs, when asked for, in the legacy shape (CompletionLogprobsWriter); a choice that had none to
 * report (no echo, no text) still has its (empty) arrays, in an empty text chunk before its finish chunk. `finish`
 * returns the completion the chunks fold to (foldCompletionChunk) when they carry its usage: the body when not
 * streamed (asked with `includeUsage`).
 */
export function completionEvents(envelope: CompletionEnvelope, plan: CompletionPlan, includeUsage: boolean) {
    return (sendChunk: Send): TurnStream<CompletionsDone> => {
        let folded: TextCompletionSnapshot | undefined;
        const emit = (chunk: TextCompletionChunk) => {
            folded = foldCompletionChunk(folded, chunk);
            sendChunk(chunk);
        };
        /** The wire choices whose chunks carried logprobs. */
        const withLogprobs = new Set<number>();
        const send = (choice: WireCompletionChoice) => {
            if (choice.logprobs != null)
                withLogprobs.add(choice.index);
            emit(toCompletionChunk(envelope, choice, includeUsage ? null : undefined));
        };
        return {
            hooks: (prompt) => {
                const logprobs = Array.from({length: plan.n}, () => new CompletionLogprobsWriter());
                const index = (choice: number) => prompt * plan.n + choice;
                return {
                    onPrompt: (echo) => {
                        for (let choice = 0; choice < plan.n; choice++)
                            send({text: echo.text, index: index(choice), logprobs: plan.logprobs == null ? null : logprobs[choice].echo(echo), finish_reason: null});
                    },
                    onText: (choice, text, entries) =>
                        send({text, index: index(choice), logprobs: plan.logprobs == null ? null : logprobs[choice].piece(text, entries ?? []), finish_reason: null}),
                    onFinish: (result) => {
                        if (plan.logprobs != null && !withLogprobs.has(index(result.index)))
                            send({text: "", index: index(result.index), logprobs: logprobs[result.index].piece("", []), finish_reason: null});
                        send({text: "", index: index(result.index), logprobs: null, finish_reason: toCompletionFinishReason(result.finishReason)});
                    }
                };
            },
            finish: ({outcomes}): TextCompletion | undefined => {
                if (!includeUsage)
                    return undefined;
                emit(toCompletionChunk(envelope, null, toCompletionUsage(outcomes)));
                return finishedTextCompletion(folded!);
            }
        };
    };
}
