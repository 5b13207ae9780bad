import crypto from "node:crypto";
import type { Middleware } from "koa";
import type { RequestState } from "../../../core/http/RequestState.js";
import { SseWriter } from "../../../core/streaming/SseWriter.js";
import { streamResponse } from "../../../core/streaming/streamResponse.js";
import { compileRequestValidator } from "../../../core/validation/compileRequestValidator.js";
import type { RouteContext } from "../../Capability.js";
import type { ChatEngine, ChatJob } from "../ChatEngine.js";
import { toChatJob } from "../toChatJob.js";
import type { CountTokensRequest, MessageCreateRequest } from "./MessagesWire.js";
import { countTokensSchema, messagesSchema } from "./messagesSchema.js";
import { toAnthropicError } from "./toAnthropicError.js";
import { toChatRequest, toReasoning } from "./toChatRequest.js";
import { thinkingSignature, toMessage, toStopReason, toUsage, toolUseId } from "./toMessage.js";

/** At most two socket writes per this window, as chat completions' streams (see SseWriter). */
const tokenCoalesceMs = 8;

function jobOf(request: MessageCreateRequest | CountTokensRequest, engine: ChatEngine): ChatJob {
    const job = {...toChatJob(toChatRequest(request), engine.info), reasoning: toReasoning(request.thinking)};
    const topK = (request as MessageCreateRequest).top_k;
    return topK != null && topK > 0 ? {...job, sampling: {...job.sampling, topK}} : job;
}

/** `display: omitted` keeps the thinking's text out of the answer (its signature stays). */
function displayOf(request: MessageCreateRequest): "summarized" | "omitted" {
    const thinking = request.thinking;
    return thinking != null && "display" in thinking && thinking.display === "omitted" ? "omitted" : "summarized";
}

/**
 * POST /v1/messages: Anthropic's Messages API over the chat engine. Not streamed: one Message. Streamed:
 * Anthropic's events in its order: message_start, then per block content_block_start, its deltas
 * (text_delta, input_json_delta), content_block_stop, then message_delta (stop reason, usage) and
 * message_stop; `ping` while quiet; a failure after the headers is an `error` event in Anthropic's shape.
 */
export function messagesHandler(context: RouteContext): Middleware {
    const validate = compileRequestValidator<MessageCreateRequest>(messagesSchema);
    return async (ctx) => {
        const state = ctx.state as RequestState;
        const request = validate(ctx.request.body);
        const {entry, engine} = context.engines.engineFor<ChatEngine>(request.model, "chat");
        const job = jobOf(request, engine);
        const id = "msg_" + crypto.randomBytes(12).toString("hex");
        Object.assign(state.logFields, {model: entry.id, user: request.metadata?.user_id ?? undefined, stream: request.stream === true});

        if (request.stream !== true) {
            const run = await engine.submit(job, {signal: state.signal});
            const [choice] = await run.done;
            Object.assign(state.logFields, {prompt_tokens: run.promptTokens, completion_tokens: choice.completionTokens});
            ctx.body = toMessage(id, entry.id, run.promptTokens, choice, displayOf(request));
            return;
        }

        // Blocks in order: a thinking model's thinking block, at most one text block, then one tool_use block per call.
        // Opened by streamResponse once the engine took the job; message_start goes first.
        const stream = new SseWriter(ctx, {pingMs: context.ssePingMs, coalesceMs: tokenCoalesceMs, errorBody: (error) => toAnthropicError(error).body});
        let open: {index: number, type: "thinking" | "text" | "tool_use"} | null = null;
        let blocks = 0;
        let calls = 0;
        let thought = "";
        const omitted = displayOf(request) === "omitted";
        const send = (type: string, data: Record<string, unknown>) => stream.send({type, ...data}, type);
        const closeBlock = () => {
            if (open?.type === "thinking")
                send("content_block_delta", {index: open.index, delta: {type: "signature_delta", signature: thinkingSignature(thought.trim())}});
            if (open != null)
                send("content_block_stop", {index: open.index});
            open = null;
        };
        const firstToken = () => state.logFields.ttft_ms ??= Math.round(performance.now() - state.receivedAt);
        const run = await engine.submit(job, {
            signal: state.signal,
            onReasoning: (_index, text) => {
                firstToken();
                if (open?.type !== "thinking") {
                    closeBlock();
                    open = {index: blocks++, type: "thinking"};
                    send("content_block_start", {index: open.index, content_block: {type: "thinking", thinking: "", signature: ""}});
                }
                thought += text;
                if (!omitted)
                    send("content_block_delta", {index: open.index, delta: {type: "thinking_delta", thinking: text}});
            },
            onText: (_index, text) => {
                if (text === "")
                    return;
                firstToken();
                if (open?.type !== "text") {
                    closeBlock();
                    open = {index: blocks++, type: "text"};
                    send("content_block_start", {index: open.index, content_block: {type: "text", text: ""}});
                }
                send("content_block_delta", {index: open.index, delta: {type: "text_delta", text}});
            },
            onToolCall: (_index, event) => {
                firstToken();
                if (event.type === "call") {
                    closeBlock();
                    open = {index: blocks++, type: "tool_use"};
                    send("content_block_start", {index: open.index, content_block: {type: "tool_use", id: toolUseId(id, calls++), name: event.name, input: {}}});
                } else if (open != null && event.fragment !== "")
                    send("content_block_delta", {index: open.index, delta: {type: "input_json_delta", partial_json: event.fragment}});
            }
        });
        send("message_start", {message: {
            id, type: "message", role: "assistant", model: entry.id, content: [], stop_reason: null, stop_sequence: null,
            usage: {input_tokens: run.promptTokens, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}
        }});
        send("ping", {});
        // A refusal (full queue, prompt too long) was thrown by submit: the stream starts now.
        await streamResponse(ctx, stream, {started: Promise.resolve(), produce: async () => {
            const [choice] = await run.done;
            if (blocks === 0 || (blocks === 1 && thought !== "")) {
                // An empty answer is still one (empty) text block, as the non-streamed Message has.
                closeBlock();
                open = {index: blocks++, type: "text"};
                send("content_block_start", {index: open.index, content_block: {type: "text", text: ""}});
            }
            closeBlock();
            Object.assign(state.logFields, {prompt_tokens: run.promptTokens, completion_tokens: choice.completionTokens});
            const usage = toUsage(run.promptTokens, choice);
            send("message_delta", {delta: {stop_reason: toStopReason(choice), stop_sequence: choice.stopSequence ?? null}, usage});
            send("message_stop", {});
        }});
    };
}

/** POST /v1/messages/count_tokens: the prompt tokens a Messages request would take, template and tools included. */
export function countTokensHandler(context: RouteContext): Middleware {
    const validate = compileRequestValidator<CountTokensRequest>(countTokensSchema);
    return async (ctx) => {
        const request = validate(ctx.request.body);
        const {entry, engine} = context.engines.engineFor<ChatEngine>(request.model, "chat");
        (ctx.state as RequestState).logFields.model = entry.id;
        ctx.body = {input_tokens: await engine.countPromptTokens(jobOf(request, engine))};
    };
}
