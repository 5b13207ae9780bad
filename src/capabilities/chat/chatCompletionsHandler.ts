import crypto from "node:crypto";
import type { Middleware } from "koa";
import type { RequestState } from "../../core/http/RequestState.js";
import { SseWriter } from "../../core/streaming/SseWriter.js";
import { streamResponse } from "../../core/streaming/streamResponse.js";
import { compileRequestValidator } from "../../core/validation/compileRequestValidator.js";
import type { RouteContext } from "../Capability.js";
import type { ChatCompletionRequest } from "./ChatCompletionWire.js";
import { chatCompletionSchema } from "./chatCompletionSchema.js";
import type { ChatEngine, ChatRun, ChoiceResult } from "./ChatEngine.js";
import { toChatCompletion, toChunk, toFinishReason, toToolCallDelta, toUsage, type CompletionEnvelope } from "./chatResponses.js";
import { toChatJob, usesDeprecatedFunctions } from "./toChatJob.js";
import { toWireLogprobs } from "./toWireLogprobs.js";

/**
 * At most two socket writes per this window (see SseWriter): a small model produces a token every
 * millisecond, and one write per token took CPU from the decoding thread.
 */
const tokenCoalesceMs = 8;

/** POST /v1/chat/completions: validate, resolve the model, run the job, answer as JSON or SSE. */
export function chatCompletionsHandler(context: RouteContext): Middleware {
    const validate = compileRequestValidator<ChatCompletionRequest>(chatCompletionSchema);

    return async (ctx) => {
        const state = ctx.state as RequestState;
        const request = validate(ctx.request.body);
        const {entry, engine} = context.engines.engineFor<ChatEngine>(request.model, "chat");
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
            const run = await engine.submit(job, {signal: state.signal});
            const choices = await run.done;
            logUsage(state, run, choices);
            ctx.body = toChatCompletion(envelope, run.promptTokens, choices, deprecatedFunctions);
            return;
        }

        const includeUsage = request.stream_options?.include_usage === true;
        const usageField = includeUsage ? null : undefined;
        // Opened by streamResponse once the engine took the job; the opening role chunks go first.
        const stream = new SseWriter(ctx, {pingMs: context.ssePingMs, coalesceMs: tokenCoalesceMs, terminator: "[DONE]"});
        const send = (chunk: unknown) => stream.send(chunk);
        for (let index = 0; index < job.n; index++)
            send(toChunk(envelope, {index, delta: {role: "assistant", content: ""}, logprobs: null, finish_reason: null}, usageField));

        // Submitted before the headers go out: a prompt that does not fit or a full queue is still a plain 400/503.
        const firstToken = () => state.logFields.ttft_ms ??= Math.round(performance.now() - state.receivedAt);
        // A thinking model's reasoning streams as `delta.reasoning_content`, before its answer's `delta.content`.
        const run = await engine.submit(job, {
            signal: state.signal,
            onReasoning: (index, text) => {
                firstToken();
                send(toChunk(envelope, {index, delta: {reasoning_content: text}, logprobs: null, finish_reason: null}, usageField));
            },
            onText: (index, text, logprobs) => {
                firstToken();
                send(toChunk(envelope, {index, delta: {content: text}, logprobs: toWireLogprobs(logprobs), finish_reason: null}, usageField));
            },
            onToolCall: (index, event, logprobs) => {
                firstToken();
                if (!deprecatedFunctions)
                    send(toChunk(envelope, {index, delta: {tool_calls: [toToolCallDelta(event)]}, logprobs: toWireLogprobs(logprobs), finish_reason: null}, usageField));
                else if (event.index === 0) {
                    const functionCall = event.type === "call" ? {name: event.name, arguments: ""} : {arguments: event.fragment};
                    send(toChunk(envelope, {index, delta: {function_call: functionCall}, logprobs: toWireLogprobs(logprobs), finish_reason: null}, usageField));
                }
            },
            onFinish: (choice) => {
                send(toChunk(envelope, {index: choice.index, delta: {}, logprobs: null, finish_reason: toFinishReason(choice.finishReason, deprecatedFunctions)}, usageField));
            }
        });

        // A refusal (full queue, prompt too long) was thrown by submit: the stream starts now.
        await streamResponse(ctx, stream, {started: Promise.resolve(), produce: async () => {
            const choices = await run.done;
            logUsage(state, run, choices);
            if (includeUsage)
                stream.send(toChunk(envelope, null, toUsage(run.promptTokens, choices)));
        }});
    };
}

function logUsage(state: RequestState, run: ChatRun, choices: ChoiceResult[]) {
    state.logFields.prompt_tokens = run.promptTokens;
    state.logFields.completion_tokens = choices.reduce((sum, choice) => sum + choice.completionTokens, 0);
}
