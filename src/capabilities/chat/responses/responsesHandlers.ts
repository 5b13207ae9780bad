import crypto from "node:crypto";
import type { RouterContext, RouterMiddleware } from "@koa/router";
import type { Middleware } from "koa";
import { ApiError } from "../../../core/http/ApiError.js";
import type { RequestState } from "../../../core/http/RequestState.js";
import { SseWriter } from "../../../core/streaming/SseWriter.js";
import { streamResponse } from "../../../core/streaming/streamResponse.js";
import { compileRequestValidator } from "../../../core/validation/compileRequestValidator.js";
import type { RouteContext } from "../../Capability.js";
import type { ChatEngine } from "../ChatEngine.js";
import { toChatJob } from "../toChatJob.js";
import { ResponseStore } from "./ResponseStore.js";
import type { InputItem, OutputFunctionCall, OutputMessage, ResponseCreateRequest, ResponseObject } from "./ResponsesWire.js";
import { responsesSchema } from "./responsesSchema.js";
import { inputItems, toChatRequest } from "./toChatRequest.js";
import { toOutputItems, toResponse, toUsage, type ResponseIds } from "./toResponse.js";

/** At most two socket writes per this window, as chat completions' streams (see SseWriter). */
const tokenCoalesceMs = 8;

const randomId = (prefix: string) => `${prefix}_${crypto.randomBytes(16).toString("hex")}`;

function idsFor(responseId: string): ResponseIds {
    const calls = new Map<number, {id: string, callId: string}>();
    return {
        response: responseId,
        message: randomId("msg"),
        reasoning: randomId("rs"),
        call: (index) => {
            let ids = calls.get(index);
            if (ids == null)
                calls.set(index, ids = {id: randomId("fc"), callId: randomId("call")});
            return ids;
        }
    };
}

/** The key a request authenticated with (the response's owner), null on a server without keys. */
const ownerOf = (state: RequestState) => typeof state.logFields.key === "string" ? state.logFields.key : null;

/**
 * POST /v1/responses: OpenAI's Responses API over the chat engine (stateless per request; `store` keeps
 * the response for `previous_response_id` and GET). Streamed: the typed events with `sequence_number`,
 * in OpenAI's order.
 */
export function createResponseHandler(context: RouteContext, store: ResponseStore): Middleware {
    const validate = compileRequestValidator<ResponseCreateRequest>(responsesSchema);
    return async (ctx) => {
        const state = ctx.state as RequestState;
        const request = validate(ctx.request.body);
        const owner = ownerOf(state);
        const previous = request.previous_response_id != null ? store.get(request.previous_response_id, owner) : null;
        if (request.previous_response_id != null && previous == null)
            throw new ApiError(404, "invalid_request_error", `Previous response with id '${request.previous_response_id}' not found.`,
                {param: "previous_response_id", code: "not_found"});
        const history = previous != null ? ResponseStore.conversationOf(previous) : [];
        const {entry, engine} = context.engines.engineFor<ChatEngine>(request.model, "chat");
        const job = toChatJob(toChatRequest(request, history), engine.info);
        const id = randomId("resp");
        const ids = idsFor(id);
        const createdAt = Math.floor(Date.now() / 1000);
        Object.assign(state.logFields, {model: entry.id, user: request.user, stream: request.stream === true});
        const input = inputItems(request.input).map((item) => ({...item, id: item.id ?? randomId(item.type === "function_call_output" ? "fco" : "item")}));
        const finish = (response: ResponseObject) => {
            if (response.store)
                store.put({response, input, history, owner});
            return response;
        };

        if (request.stream !== true) {
            const run = engine.submit(job, {signal: state.signal});
            const [choice] = await run.done;
            Object.assign(state.logFields, {prompt_tokens: run.promptTokens, completion_tokens: choice.completionTokens});
            ctx.body = finish(toResponse(id, createdAt, entry.id, request, {
                status: choice.finishReason === "length" ? "incomplete" : "completed", output: toOutputItems(ids, choice), usage: toUsage(run.promptTokens, choice)
            }));
            return;
        }

        // Opened by streamResponse once the engine took the job; response.created goes first. A failure after it
        // (the engine's, or the end of a shutdown's grace) is OpenAI's `response.failed`, the response with its error.
        const stream = new SseWriter(ctx, {
            pingMs: context.ssePingMs, coalesceMs: tokenCoalesceMs, errorEvent: "response.failed",
            errorBody: (error) => ({type: "response.failed", sequence_number: sequence++, response: {...base, status: "failed", error: {code: "server_error", message: error.message}}})
        });
        let sequence = 0;
        const send = (type: string, data: Record<string, unknown>) => stream.send({type, sequence_number: sequence++, ...data}, type);
        let outputIndex = 0;
        let message: {index: number, text: string} | null = null;
        let reasoning: {index: number, text: string} | null = null;
        const calls = new Map<number, {index: number, item: OutputFunctionCall}>();
        const firstToken = () => state.logFields.ttft_ms ??= Math.round(performance.now() - state.receivedAt);
        const openMessage = () => {
            if (message != null)
                return message;
            message = {index: outputIndex++, text: ""};
            send("response.output_item.added", {output_index: message.index, item: {type: "message", id: ids.message, status: "in_progress", role: "assistant", content: []}});
            send("response.content_part.added", {item_id: ids.message, output_index: message.index, content_index: 0, part: {type: "output_text", text: "", annotations: []}});
            return message;
        };
        const run = engine.submit(job, {
            signal: state.signal,
            onReasoning: (_index, text) => {
                firstToken();
                if (reasoning == null) {
                    reasoning = {index: outputIndex++, text: ""};
                    send("response.output_item.added", {output_index: reasoning.index, item: {type: "reasoning", id: ids.reasoning, summary: [], content: [], status: "in_progress"}});
                    send("response.reasoning_summary_part.added", {item_id: ids.reasoning, output_index: reasoning.index, summary_index: 0, part: {type: "summary_text", text: ""}});
                    send("response.content_part.added", {item_id: ids.reasoning, output_index: reasoning.index, content_index: 0, part: {type: "reasoning_text", text: ""}});
                }
                reasoning.text += text;
                send("response.reasoning_summary_text.delta", {item_id: ids.reasoning, output_index: reasoning.index, summary_index: 0, delta: text});
                send("response.reasoning_text.delta", {item_id: ids.reasoning, output_index: reasoning.index, content_index: 0, delta: text});
            },
            onText: (_index, text) => {
                if (text === "")
                    return;
                firstToken();
                const open = openMessage();
                open.text += text;
                send("response.output_text.delta", {item_id: ids.message, output_index: open.index, content_index: 0, delta: text, logprobs: []});
            },
            onToolCall: (_index, event) => {
                firstToken();
                if (event.type === "call") {
                    const {id: itemId, callId} = ids.call(event.index);
                    const call = {index: outputIndex++, item: {type: "function_call" as const, id: itemId, call_id: callId, name: event.name, arguments: "", status: "in_progress" as const}};
                    calls.set(event.index, call);
                    send("response.output_item.added", {output_index: call.index, item: call.item});
                } else {
                    const call = calls.get(event.index);
                    if (call == null || event.fragment === "")
                        return;
                    call.item.arguments += event.fragment;
                    send("response.function_call_arguments.delta", {item_id: call.item.id, output_index: call.index, delta: event.fragment});
                }
            }
        });
        const base = toResponse(id, createdAt, entry.id, request, {status: "in_progress", output: [], usage: null});
        send("response.created", {response: base});
        send("response.in_progress", {response: base});
        // A refusal (full queue, prompt too long) was thrown by submit: the stream starts now.
        await streamResponse(ctx, stream, {started: Promise.resolve(), produce: async () => {
            const [choice] = await run.done;
            Object.assign(state.logFields, {prompt_tokens: run.promptTokens, completion_tokens: choice.completionTokens});
            const output = toOutputItems(ids, choice);
            if (reasoning != null && !output.some((item) => item.type === "reasoning")) {
                // Reasoning that was only whitespace: its item still closes, with its text.
                const item = {type: "reasoning" as const, id: ids.reasoning, summary: [{type: "summary_text" as const, text: ""}], content: [{type: "reasoning_text" as const, text: ""}], status: "completed" as const};
                output.unshift(item);
            }
            for (const item of output) {
                if (item.type === "reasoning") {
                    const index = reasoning?.index ?? outputIndex++;
                    const part = item.content[0];
                    send("response.reasoning_text.done", {item_id: item.id, output_index: index, content_index: 0, text: part.text});
                    send("response.content_part.done", {item_id: item.id, output_index: index, content_index: 0, part});
                    send("response.reasoning_summary_text.done", {item_id: item.id, output_index: index, summary_index: 0, text: item.summary[0].text});
                    send("response.reasoning_summary_part.done", {item_id: item.id, output_index: index, summary_index: 0, part: item.summary[0]});
                    send("response.output_item.done", {output_index: index, item});
                } else if (item.type === "message") {
                    const open = openMessage();
                    const part = item.content[0];
                    send("response.output_text.done", {item_id: item.id, output_index: open.index, content_index: 0, text: part.text, logprobs: []});
                    send("response.content_part.done", {item_id: item.id, output_index: open.index, content_index: 0, part});
                    send("response.output_item.done", {output_index: open.index, item});
                } else {
                    const call = [...calls.values()].find((candidate) => candidate.item.id === item.id);
                    const index = call?.index ?? outputIndex++;
                    send("response.function_call_arguments.done", {item_id: item.id, output_index: index, arguments: item.arguments});
                    send("response.output_item.done", {output_index: index, item});
                }
            }
            const status = choice.finishReason === "length" ? "incomplete" : "completed";
            const response = finish(toResponse(id, createdAt, entry.id, request, {status, output, usage: toUsage(run.promptTokens, choice)}));
            send(status === "incomplete" ? "response.incomplete" : "response.completed", {response});
        }});
    };
}

function stored(store: ResponseStore, ctx: RouterContext) {
    const found = store.get(String(ctx.params.id), ownerOf(ctx.state as RequestState));
    if (found == null)
        throw new ApiError(404, "invalid_request_error", `Response with id '${ctx.params.id}' not found.`, {param: "response_id", code: "not_found"});
    return found;
}

/** GET /v1/responses/{id}: a stored response (only to the key that created it). */
export function retrieveResponseHandler(store: ResponseStore): RouterMiddleware {
    return (ctx) => {
        ctx.body = stored(store, ctx).response;
    };
}

/** DELETE /v1/responses/{id}. */
export function deleteResponseHandler(store: ResponseStore): RouterMiddleware {
    return (ctx) => {
        const found = stored(store, ctx);
        store.delete(found.response.id, found.owner);
        ctx.body = {id: found.response.id, object: "response", deleted: true};
    };
}

/** GET /v1/responses/{id}/input_items: the input it was given, newest first (OpenAI's default order), or oldest first with `order=asc`. */
export function inputItemsHandler(store: ResponseStore): RouterMiddleware {
    return (ctx) => {
        const items: (InputItem & {id: string})[] = ctx.query.order === "asc" ? [...stored(store, ctx).input] : [...stored(store, ctx).input].reverse();
        ctx.body = {object: "list", data: items, first_id: items[0]?.id ?? null, last_id: items.at(-1)?.id ?? null, has_more: false};
    };
}
