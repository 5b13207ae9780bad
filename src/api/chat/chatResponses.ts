import type { ChoiceResult } from "../../engines/ChatEngine.js";
import type { ChatCompletion, ChatCompletionChunk, Usage } from "./ChatCompletionWire.js";
import { toWireLogprobs } from "./toWireLogprobs.js";

/** The fields every response and every chunk of one completion share. */
export type CompletionEnvelope = {id: string, created: number, model: string, systemFingerprint: string};

export function toUsage(promptTokens: number, choices: readonly ChoiceResult[]): Usage {
    const completion = choices.reduce((sum, choice) => sum + choice.completionTokens, 0);
    return {prompt_tokens: promptTokens, completion_tokens: completion, total_tokens: promptTokens + completion};
}

export function toChatCompletion(envelope: CompletionEnvelope, promptTokens: number, choices: readonly ChoiceResult[]): ChatCompletion {
    return {
        id: envelope.id,
        object: "chat.completion",
        created: envelope.created,
        model: envelope.model,
        system_fingerprint: envelope.systemFingerprint,
        choices: [...choices].sort((a, b) => a.index - b.index).map((choice) => ({
            index: choice.index,
            message: {role: "assistant", content: choice.text, refusal: null},
            logprobs: toWireLogprobs(choice.logprobs),
            finish_reason: choice.finishReason
        })),
        usage: toUsage(promptTokens, choices)
    };
}

export function toChunk(
    envelope: CompletionEnvelope,
    choice: ChatCompletionChunk["choices"][number] | null,
    usage?: Usage | null
): ChatCompletionChunk {
    return {
        id: envelope.id,
        object: "chat.completion.chunk",
        created: envelope.created,
        model: envelope.model,
        system_fingerprint: envelope.systemFingerprint,
        choices: choice == null ? [] : [choice],
        ...(usage === undefined ? {} : {usage})
    };
}
