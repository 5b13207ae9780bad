import crypto from "node:crypto";
import type { Middleware } from "koa";
import { ApiError } from "../../../core/http/ApiError.js";
import type { RequestState } from "../../../core/http/RequestState.js";
import { SseWriter } from "../../../core/streaming/SseWriter.js";
import { streamResponse } from "../../../core/streaming/streamResponse.js";
import { compileRequestValidator } from "../../../core/validation/compileRequestValidator.js";
import type { RouteContext } from "../../Capability.js";
import type { ChatEngine, ChatRunHooks, ChoiceResult, PromptEcho } from "../ChatEngine.js";
import type { CompletionEnvelope } from "../chatResponses.js";
import { ContextLengthExceededError } from "../errors/ContextLengthExceededError.js";
import { EmptyPromptError } from "../errors/EmptyPromptError.js";
import { TooManyChoicesError } from "../errors/TooManyChoicesError.js";
import { CompletionLogprobsWriter } from "./CompletionLogprobsWriter.js";
import { toCompletionChunk, toCompletionFinishReason, toCompletionUsage, toTextCompletion, type PromptOutcome } from "./completionResponses.js";
import type { CompletionRequest } from "./CompletionWire.js";
import { completionSchema } from "./completionSchema.js";
import { selectBestOf } from "./selectBestOf.js";
import { runPrompts } from "./runPrompts.js";
import { toCompletionJobs } from "./toCompletionJobs.js";

/** As chat's: at most two socket writes per this window (see SseWriter). */
const tokenCoalesceMs = 8;

/**
 * POST /v1/completions (OpenAI's legacy endpoint) on the chat models: each prompt is one chat-engine
 * job with a raw prompt (no template), run by runPrompts; the first ones are submitted before any
 * header goes out, so a prompt that does not fit, a full queue or too many choices is a plain 4xx/503.
 */
export function completionsHandler(context: RouteContext): Middleware {
    const validate = compileRequestValidator<CompletionRequest>(completionSchema);

    return async (ctx) => {
        const state = ctx.state as RequestState;
        const request = validate(ctx.request.body);
        const {entry, engine} = context.engines.engineFor<ChatEngine>(request.model, "chat");
        const plan = toCompletionJobs(request, engine.info);
        const stream = request.stream === true;
        Object.assign(state.logFields, {model: entry.id, user: request.user ?? undefined, n: plan.n, prompts: plan.jobs.length, stream});

        const envelope: CompletionEnvelope = {
            id: "cmpl-" + crypto.randomBytes(16).toString("base64url"),
            created: Math.floor(Date.now() / 1000),
            model: entry.id,
            systemFingerprint: engine.info.fingerprint
        };
        const includeUsage = stream && request.stream_options?.include_usage === true;
        const usageField = includeUsage ? null : undefined;
        // Opened by streamResponse once the first prompts were taken (`started`: their refusals reject it).
        const writer = new SseWriter(ctx, {pingMs: context.ssePingMs, coalesceMs: tokenCoalesceMs, terminator: "[DONE]"});
        const send = (choice: Parameters<typeof toCompletionChunk>[1]) => writer.send(toCompletionChunk(envelope, choice, usageField));

        const echoes: (PromptEcho | null)[] = plan.jobs.map(() => null);
        const streamHooks = (prompt: number): Omit<ChatRunHooks, "signal"> => {
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
        };
        const collectHooks = (prompt: number): Omit<ChatRunHooks, "signal"> => ({onPrompt: (echo) => echoes[prompt] = echo});

        // The first prompts are submitted before the headers go out (see runPrompts); one failing prompt stops the others.
        const stopAll = new AbortController();
        const {started, results} = runPrompts({
            engine,
            jobs: plan.jobs,
            concurrency: Math.floor(engine.load().parallel / plan.bestOf),
            signal: AbortSignal.any([state.signal, stopAll.signal]),
            stopAll,
            hooksOf: (prompt) => stream ? streamHooks(prompt) : collectHooks(prompt),
            toError: (error, prompt) => toCompletionError(error, request, prompt)
        });
        results.catch(() => {});
        const finish = async (): Promise<PromptOutcome[]> => {
            const outcomes = (await results).map(({promptTokens, choices}, prompt): PromptOutcome => ({
                promptTokens,
                echo: echoes[prompt],
                choices: plan.bestOf > plan.n ? selectBestOf(choices, plan.n) : choices,
                completionTokens: choices.reduce((sum, choice) => sum + choice.completionTokens, 0),
                // Echoed logprobs evaluate the whole prompt again, whatever the prompt cache kept.
                ...(plan.echo && plan.logprobs != null ? {cachedTokens: 0} : cachedTokensOf(choices))
            }));
            const usage = toCompletionUsage(outcomes);
            state.logFields.prompt_tokens = usage.prompt_tokens;
            state.logFields.completion_tokens = usage.completion_tokens;
            return outcomes;
        };

        if (!stream) {
            ctx.body = toTextCompletion(envelope, await finish(), plan.n, plan.logprobs != null);
            return;
        }
        await streamResponse(ctx, writer, {started, produce: async () => {
            const outcomes = await finish();
            if (includeUsage)
                writer.send(toCompletionChunk(envelope, null, toCompletionUsage(outcomes)));
        }});
    };
}

/** As chat counts them: the prompt tokens every choice reused (each ran on its own sequence). */
function cachedTokensOf(choices: readonly ChoiceResult[]): {cachedTokens?: number} {
    const cached = choices.map((choice) => choice.cachedPromptTokens);
    return cached.length > 0 && cached.every((tokens) => tokens != null) ? {cachedTokens: Math.min(...cached as number[])} : {};
}

function toCompletionError(error: unknown, request: CompletionRequest, prompt: number): unknown {
    const param = Array.isArray(request.prompt) && request.prompt.some((item) => typeof item !== "number") ? `prompt[${prompt}]` : "prompt";
    if (error instanceof ContextLengthExceededError)
        return ApiError.invalidRequest(
            `This model's maximum context length is ${error.contextSize} tokens, however your prompt is ${error.atLeast ? "at least " : ""}${error.promptTokens} tokens. Please reduce the length of the prompt.`,
            param, "context_length_exceeded");
    if (error instanceof EmptyPromptError)
        return ApiError.invalidRequest(`Invalid '${param}': ${error.message}`, param);
    if (error instanceof TooManyChoicesError)
        return ApiError.invalidRequest(error.message.replace("'n' is", request.best_of != null ? "'best_of' is" : "'n' is"),
            request.best_of != null ? "best_of" : "n");
    return error;
}
