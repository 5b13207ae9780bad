import crypto from "node:crypto";
import type { Middleware } from "koa";
import type { ChatRun, ChoiceResult } from "./ChatEngine.js";
import type { EngineHost } from "../../core/engines/EngineHost.js";
import type { Logger } from "../../logger.js";
import type { ModelRegistry } from "../../registry/ModelRegistry.js";
import { ApiError } from "../../core/http/ApiError.js";
import type { RequestState } from "../../core/http/RequestState.js";
import { SseStream } from "../../core/streaming/SseWriter.js";
import { toApiError } from "../../server/toApiError.js";
import { compileRequestValidator } from "../../core/validation/compileRequestValidator.js";
import { resolveModelFor } from "../../core/engines/resolveModelFor.js";
import type { ChatCompletionRequest } from "./ChatCompletionWire.js";
import { chatCompletionSchema } from "./chatCompletionSchema.js";
import { toChatCompletion, toChunk, toFinishReason, toToolCallDelta, toUsage, type CompletionEnvelope } from "./chatResponses.js";
import { toWireLogprobs } from "./toWireLogprobs.js";
import { toChatJob, usesDeprecatedFunctions } from "./toChatJob.js";

export type ChatCompletionsDeps = {
    registry: ModelRegistry;
    engines: EngineHost;
    logger: Logger;
    ssePingMs: number;
    bodyLimit: string;
};

/** POST /v1/chat/completions: validate, resolve the model, run the job, answer as JSON or SSE. */
export function chatCompletionsHandler(deps: ChatCompletionsDeps): Middleware {
    const validate = compileRequestValidator<ChatCompletionRequest>(chatCompletionSchema);

    return async (ctx) => {
        const state = ctx.state as RequestState;
        const request = validate(ctx.request.body);

        const entry = resolveModelFor(deps.registry, request.model, "chat");
        const engine = deps.engines.chat(entry.id);
        if (engine == null)
            throw ApiError.unavailable(`Model '${entry.id}' is still loading.`, 5);
        const job = toChatJob(request, engine.info);
        const deprecatedFunctions = usesDeprecatedFunctions(request);
        Object.assign(state.logFields, {model: entry.id, user: request.user ?? undefined, n: job.n, stream: request.stream === true});

        const envelope: CompletionEnvelope = {
            id: "chatcmpl-" + crypto.randomBytes(16).toString("base64url"),
            created: Math.floor(Date.now() / 1000),
            model: entry.id,
            systemFingerprint: engine.info.fingerprint
        };

        if (request.stream !== true) {
            const run = engine.submit(job, {signal: state.signal});
            const choices = await run.done;
            logUsage(state, run, choices);
            ctx.body = toChatCompletion(envelope, run.promptTokens, choices, deprecatedFunctions);
            return;
        }

        const includeUsage = request.stream_options?.include_usage === true;
        const usageField = includeUsage ? null : undefined;
        // Engines call back asynchronously, so the stream below is open before the first chunk.
        let stream!: SseStream;
        const send = (chunk: unknown) => stream.send(chunk);

        const run = engine.submit(job, {
            signal: state.signal,
            onText: (index, text, logprobs) =>
                send(toChunk(envelope, {index, delta: {content: text}, logprobs: toWireLogprobs(logprobs), finish_reason: null}, usageField)),
            onToolCall: (index, event, logprobs) => {
                if (!deprecatedFunctions)
                    send(toChunk(envelope, {index, delta: {tool_calls: [toToolCallDelta(event)]}, logprobs: toWireLogprobs(logprobs), finish_reason: null}, usageField));
                else if (event.index === 0) {
                    const functionCall = event.type === "call" ? {name: event.name, arguments: ""} : {arguments: event.fragment};
                    send(toChunk(envelope, {index, delta: {function_call: functionCall}, logprobs: toWireLogprobs(logprobs), finish_reason: null}, usageField));
                }
            },
            onFinish: (choice) => send(toChunk(envelope,
                {index: choice.index, delta: {}, logprobs: null, finish_reason: toFinishReason(choice.finishReason, deprecatedFunctions)}, usageField))
        });

        // From here on the status is 200 and errors travel inside the stream.
        stream = new SseStream(ctx, deps.ssePingMs);
        for (let index = 0; index < job.n; index++)
            stream.send(toChunk(envelope, {index, delta: {role: "assistant", content: ""}, logprobs: null, finish_reason: null}, usageField));

        try {
            const choices = await run.done;
            logUsage(state, run, choices);
            if (includeUsage)
                stream.send(toChunk(envelope, null, toUsage(run.promptTokens, choices)));
            stream.done();
        } catch (error) {
            if (state.signal.aborted) {
                stream.end();
                return;
            }
            const apiError = toApiError(error, {bodyLimit: deps.bodyLimit});
            if (apiError.status === 500)
                deps.logger.error("Stream failed", {id: state.requestId, error: (error as Error)?.stack ?? String(error)});
            stream.fail(apiError);
        }
    };
}

function logUsage(state: RequestState, run: ChatRun, choices: ChoiceResult[]) {
    state.logFields.prompt_tokens = run.promptTokens;
    state.logFields.completion_tokens = choices.reduce((sum, choice) => sum + choice.completionTokens, 0);
}
