import type { CompletionEnvelope } from "../chatResponses.js";
import type { Send, TurnStream } from "../turn/runChatTurn.js";
import { CompletionLogprobsWriter } from "./CompletionLogprobsWriter.js";
import { toCompletionChunk, toCompletionFinishReason, toCompletionUsage, type CompletionsDone } from "./completionResponses.js";
import type { WireCompletionChoice } from "./CompletionWire.js";
import type { CompletionPlan } from "./toCompletionJobs.js";

/**
 * A legacy completion's stream: per prompt, its echo (when asked for) in each of its choices, then a chunk per piece
 * of text and a finish chunk per choice (choice k of prompt p is `index` p * n + k), and the usage chunk when
 * `stream_options.include_usage` asks for it. Logprobs, when asked for, in the legacy shape (CompletionLogprobsWriter).
 */
export function completionEvents(envelope: CompletionEnvelope, plan: CompletionPlan, includeUsage: boolean) {
    return (sendChunk: Send): TurnStream<CompletionsDone> => {
        const send = (choice: WireCompletionChoice) => sendChunk(toCompletionChunk(envelope, choice, includeUsage ? null : undefined));
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
                    onFinish: (result) =>
                        send({text: "", index: index(result.index), logprobs: null, finish_reason: toCompletionFinishReason(result.finishReason)})
                };
            },
            finish: ({outcomes}) => {
                if (includeUsage)
                    sendChunk(toCompletionChunk(envelope, null, toCompletionUsage(outcomes)));
            }
        };
    };
}
