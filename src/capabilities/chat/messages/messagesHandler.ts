import crypto from "node:crypto";
import type { Middleware } from "koa";
import type { RequestState } from "../../../core/http/RequestState.js";
import { SseWriter } from "../../../core/streaming/SseWriter.js";
import { streamResponse } from "../../../core/streaming/streamResponse.js";
import type { RouteContext } from "../../Capability.js";
import type { ChatEngine, ChatJob, ChatRun, ChatRunHooks } from "../ChatEngine.js";
import { toChatJob } from "../toChatJob.js";
import { compileMessagesValidator } from "./compileMessagesValidator.js";
import { MessageEvents } from "./MessageEvents.js";
import type { CountTokensRequest, MessageCreateRequest } from "./MessagesWire.js";
import { countTokensSchema, messagesSchema } from "./messagesSchema.js";
import { toAnthropicError } from "./toAnthropicError.js";
import { toChatRequest, type MappedRequest } from "./toChatRequest.js";
import { toMessage } from "./toMessage.js";
import { thinkingDisplay, toReasoning } from "./toReasoning.js";

/** At most two socket writes per this window, as chat completions' streams (see SseWriter). */
const tokenCoalesceMs = 8;

function jobOf(request: MessageCreateRequest | CountTokensRequest, mapped: MappedRequest, engine: ChatEngine): ChatJob {
    const job = {...toChatJob(mapped.chat, engine.info), reasoning: toReasoning(request.thinking, mapped.effort)};
    const topK = (request as MessageCreateRequest).top_k;
    return topK != null && topK > 0 ? {...job, sampling: {...job.sampling, topK}} : job;
}

/** `work` with whatever the chat path throws (or its promise rejects with) told in the client's field names and Anthropic's words (ClientFields). */
function asClient<T>(state: RequestState, mapped: MappedRequest, work: () => T): T {
    const told = (error: unknown) => mapped.fields.error(error, state.toApiError);
    try {
        const result = work();
        return (result instanceof Promise ? result.catch((error) => {
            throw told(error);
        }) : result) as T;
    } catch (error) {
        throw told(error);
    }
}

/**
 * POST /v1/messages: Anthropic's Messages API over the chat engine. Not streamed: one Message. Streamed:
 * Anthropic's events (MessageEvents); `ping` comments while quiet; a failure after the headers is an `error`
 * event in Anthropic's shape.
 */
export function messagesHandler(context: RouteContext): Middleware {
    const validate = compileMessagesValidator<MessageCreateRequest>(messagesSchema);
    return async (ctx) => {
        const state = ctx.state as RequestState;
        const request = validate(ctx.request.body);
        const {entry, engine} = context.engines.engineFor<ChatEngine>(request.model, "chat");
        Object.assign(state.logFields, {model: entry.id, user: request.metadata?.user_id ?? undefined, stream: request.stream === true});
        const mapped = toChatRequest(request);
        const job = asClient(state, mapped, () => jobOf(request, mapped, engine));
        const id = "msg_" + crypto.randomBytes(12).toString("hex");
        const display = thinkingDisplay(request.thinking);
        const submit = (hooks: Omit<ChatRunHooks, "signal">): Promise<ChatRun> => asClient(state, mapped, () => engine.submit(job, {signal: state.signal, ...hooks}));

        if (request.stream !== true) {
            const run = await submit({});
            const [choice] = await run.done;
            Object.assign(state.logFields, {prompt_tokens: run.promptTokens, completion_tokens: choice.completionTokens});
            ctx.body = toMessage(id, entry.id, run.promptTokens, choice, display);
            return;
        }

        // Opened by streamResponse once the engine took the job; events wait in the writer until then.
        const stream = new SseWriter(ctx, {pingMs: context.ssePingMs, coalesceMs: tokenCoalesceMs, errorBody: (error) => toAnthropicError(error, state.requestId).body});
        const firstToken = () => state.logFields.ttft_ms ??= Math.round(performance.now() - state.receivedAt);
        let events: MessageEvents | undefined;
        const run = await submit({
            onPromptCache: (_index, cached) => events!.start(cached),
            onReasoning: (_index, text) => {
                firstToken();
                events!.reasoning(text);
            },
            onText: (_index, text) => {
                if (text !== "")
                    firstToken();
                events!.text(text);
            },
            onToolCall: (_index, event) => {
                firstToken();
                events!.toolCall(event);
            }
        });
        events = new MessageEvents(stream, {id, model: entry.id, promptTokens: run.promptTokens}, display === "omitted");
        // A refusal (full queue, prompt too long) was thrown by submit: the stream starts now.
        await streamResponse(ctx, stream, {started: Promise.resolve(), produce: async () => {
            const [choice] = await run.done;
            Object.assign(state.logFields, {prompt_tokens: run.promptTokens, completion_tokens: choice.completionTokens});
            events!.finish(choice);
        }});
    };
}

/** POST /v1/messages/count_tokens: the prompt tokens a Messages request would take, template and tools included. */
export function countTokensHandler(context: RouteContext): Middleware {
    const validate = compileMessagesValidator<CountTokensRequest>(countTokensSchema);
    return async (ctx) => {
        const state = ctx.state as RequestState;
        const request = validate(ctx.request.body);
        const {entry, engine} = context.engines.engineFor<ChatEngine>(request.model, "chat");
        state.logFields.model = entry.id;
        const mapped = toChatRequest(request);
        ctx.body = {input_tokens: await asClient(state, mapped, () => engine.countPromptTokens(jobOf(request, mapped, engine)))};
    };
}
