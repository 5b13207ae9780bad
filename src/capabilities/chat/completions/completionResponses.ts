import type { Usage } from "../ChatCompletionWire.js";
import type { ChoiceResult, PromptEcho } from "../ChatEngine.js";
import type { CompletionEnvelope } from "../chatResponses.js";
import type { TurnDone } from "../turn/runChatTurn.js";
import { CompletionLogprobsWriter } from "./CompletionLogprobsWriter.js";
import type { TextCompletion, TextCompletionChunk, WireCompletionChoice, WireCompletionFinishReason, WireCompletionLogprobs } from "./CompletionWire.js";
import type { PromptRun } from "./runPrompts.js";
import { selectBestOf } from "./selectBestOf.js";
import type { CompletionPlan } from "./toCompletionJobs.js";

/**
 * One prompt's outcome: its echo (when asked for), its returned choices (renumbered 0..n-1), the
 * tokens of every candidate generated, and the prompt tokens every candidate took from the prompt
 * cache (absent = no prompt cache).
 */
export type PromptOutcome = {
    promptTokens: number, echo: PromptEcho | null, choices: readonly ChoiceResult[], completionTokens: number, cachedTokens?: number
};

/** A completions request's answer: each prompt's outcome, and the tokens of them all. */
export type CompletionsDone = TurnDone & {outcomes: PromptOutcome[]};

/** The prompts' runs as their outcomes: the best `n` of `best_of` candidates kept, every candidate's tokens counted. */
export function toCompletionsDone(plan: CompletionPlan, runs: readonly PromptRun[], echoes: readonly (PromptEcho | null)[]): CompletionsDone {
    const outcomes = runs.map(({promptTokens, choices}, prompt): PromptOutcome => ({
        promptTokens,
        echo: echoes[prompt],
        choices: plan.bestOf > plan.n ? selectBestOf(choices, plan.n) : choices,
        completionTokens: choices.reduce((sum, choice) => sum + choice.completionTokens, 0),
        // Echoed logprobs evaluate the whole prompt again, whatever the prompt cache kept.
        ...(plan.echo && plan.logprobs != null ? {cachedTokens: 0} : cachedTokensOf(choices))
    }));
    const usage = toCompletionUsage(outcomes);
    return {promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens, outcomes};
}

/** As chat counts them: the prompt tokens every choice reused (each ran on its own sequence). */
function cachedTokensOf(choices: readonly ChoiceResult[]): {cachedTokens?: number} {
    const cached = choices.map((choice) => choice.cachedPromptTokens);
    return cached.length > 0 && cached.every((tokens) => tokens != null) ? {cachedTokens: Math.min(...cached as number[])} : {};
}

export function toCompletionFinishReason(reason: ChoiceResult["finishReason"]): WireCompletionFinishReason {
    return reason === "length" ? "length" : "stop";
}

/** The whole response: choice k of prompt p is `choices[p * n + k]`; `logprobs` only when the client asked for them. */
export function toTextCompletion(envelope: CompletionEnvelope, outcomes: readonly PromptOutcome[], n: number, withLogprobs: boolean): TextCompletion {
    const choices = outcomes.flatMap((outcome, prompt) => [...outcome.choices].sort((a, b) => a.index - b.index).map((choice): TextCompletion["choices"][number] => {
        let logprobs: WireCompletionLogprobs | null = null;
        if (withLogprobs) {
            const writer = new CompletionLogprobsWriter();
            const echoed = outcome.echo == null ? null : writer.echo(outcome.echo);
            const generated = writer.piece(choice.text, choice.logprobs ?? []);
            logprobs = echoed == null ? generated : {
                tokens: [...echoed.tokens, ...generated.tokens],
                token_logprobs: [...echoed.token_logprobs, ...generated.token_logprobs],
                top_logprobs: [...echoed.top_logprobs, ...generated.top_logprobs],
                text_offset: [...echoed.text_offset, ...generated.text_offset]
            };
        }
        return {
            text: (outcome.echo?.text ?? "") + choice.text,
            index: prompt * n + choice.index,
            logprobs,
            finish_reason: toCompletionFinishReason(choice.finishReason)
        };
    }));
    return {...envelopeFields(envelope), choices, usage: toCompletionUsage(outcomes)};
}

/**
 * Prompt tokens count once per prompt; completion tokens count every generated candidate (best_of
 * included); `cached_tokens` (as chat's) when the engine reports them for every prompt.
 */
export function toCompletionUsage(outcomes: readonly PromptOutcome[]): Usage {
    const prompt = outcomes.reduce((sum, outcome) => sum + outcome.promptTokens, 0);
    const completion = outcomes.reduce((sum, outcome) => sum + outcome.completionTokens, 0);
    const usage: Usage = {prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion};
    if (outcomes.length > 0 && outcomes.every((outcome) => outcome.cachedTokens != null))
        usage.prompt_tokens_details = {cached_tokens: outcomes.reduce((sum, outcome) => sum + outcome.cachedTokens!, 0)};
    return usage;
}

/** A streamed chunk: the response's shape with one choice's partial text, or (choices []) the usage. */
export function toCompletionChunk(envelope: CompletionEnvelope, choice: WireCompletionChoice | null, usage?: Usage | null): TextCompletionChunk {
    return {...envelopeFields(envelope), choices: choice == null ? [] : [choice], ...(usage === undefined ? {} : {usage})};
}

function envelopeFields(envelope: CompletionEnvelope) {
    return {
        id: envelope.id,
        object: "text_completion" as const,
        created: envelope.created,
        model: envelope.model,
        system_fingerprint: envelope.systemFingerprint
    };
}
