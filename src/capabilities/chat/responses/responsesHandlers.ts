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
import { ResponseEvents } from "./ResponseEvents.js";
import { ResponseStore } from "./ResponseStore.js";
import type { OutputItem, ResponseCreateRequest, ResponseObject, ResponseUsage } from "./ResponsesWire.js";
import { responsesSchema } from "./responsesSchema.js";
import { inputItems, toChatRequest } from "./toChatRequest.js";
import { toOutputItems, toResponse, toUsage, type OutputOptions, type ResponseIds } from "./toResponse.js";
import { toResponsesError } from "./toResponsesError.js";

/** At most two socket writes per this window, as chat completions' streams (see SseWriter). */
const tokenCoalesceMs = 8;

const randomId = (prefix: string) => `${prefix}_${crypto.randomBytes(16).toString("hex")}`;

function idsFor(responseId: string): ResponseIds {
    const calls = new Map<number, {id: string, callId: string}>();
    return {
        response: responseId,
        message: randomId("msg"),
        reasoning: randomId("rs"),
        call: (index, kind) => {
            let ids = calls.get(index);
            if (ids == null)
                calls.set(index, ids = {id: randomId(kind === "custom" ? "ctc" : "fc"), callId: randomId("call")});
            return ids;
        }
    };
}

/** The identity (hash) of the key a request authenticated with (the response's owner), null on a server without keys. */
const ownerOf = (state: RequestState) => state.keyHash ?? null;

/**
 * POST /v1/responses: OpenAI's Responses API over the chat engine (stateless per request; `store` keeps
 * the response for `previous_response_id` and GET). Streamed: the typed events with `sequence_number`,
 * in OpenAI's order (ResponseEvents). Errors of the chat path name the Responses fields (toResponsesError).
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
        const {chat, fields, tools} = toChatRequest(request, history);
        const inResponsesTerms = <T>(run: () => T): T => {
            // Only errors that name a field are renamed; the others stay as they are (an unexpected one is logged as such).
            const renamed = (error: unknown) => {
                const mapped = state.toApiError(error);
                return mapped.param != null ? toResponsesError(mapped, fields) : error;
            };
            try {
                const result = run();
                return (result instanceof Promise ? result.catch((error) => {
                    throw renamed(error);
                }) : result) as T;
            } catch (error) {
                throw renamed(error);
            }
        };
        const job = inResponsesTerms(() => toChatJob(chat, engine.info));
        const id = randomId("resp");
        const ids = idsFor(id);
        const createdAt = Math.floor(Date.now() / 1000);
        Object.assign(state.logFields, {model: entry.id, user: request.user, stream: request.stream === true});
        if (tools.warnings.length > 0)
            context.logger.warn("Built-in tools left out of the model's tools: this server runs none", {
                id: state.requestId, tools: tools.warnings.map((warning) => warning.param).join(",")
            });
        const input = inputItems(request.input).map((item) => ({...item, id: item.id ?? randomId(item.type === "function_call_output" ? "fco" : "item")}));
        const options: OutputOptions = {
            tools: tools.byName,
            encryptedReasoning: request.include?.includes("reasoning.encrypted_content") === true,
            logprobs: job.logprobs != null
        };
        const respond = (status: ResponseObject["status"], output: OutputItem[], usage: ResponseUsage | null) =>
            toResponse(id, createdAt, entry.id, request, {status, output, usage, warnings: tools.warnings});
        // A response the store cannot keep (larger than a key's share) says so: `store: false`.
        const finish = (response: ResponseObject) => {
            response.store &&= store.put({response, input, previous: previous ?? null, owner});
            return response;
        };

        if (request.stream !== true) {
            const run = await inResponsesTerms(() => engine.submit(job, {signal: state.signal}));
            const [choice] = await run.done;
            Object.assign(state.logFields, {prompt_tokens: run.promptTokens, completion_tokens: choice.completionTokens});
            ctx.body = finish(respond(choice.finishReason === "length" ? "incomplete" : "completed", toOutputItems(ids, choice, options), toUsage(run.promptTokens, choice)));
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
        const events = new ResponseEvents(send, ids, options);
        const firstToken = () => state.logFields.ttft_ms ??= Math.round(performance.now() - state.receivedAt);
        const run = await inResponsesTerms(() => engine.submit(job, {
            signal: state.signal,
            onReasoning: (_index, text) => {
                firstToken();
                events.reasoningDelta(text);
            },
            onText: (_index, text, logprobs) => {
                firstToken();
                events.textDelta(text, logprobs);
            },
            onToolCall: (_index, event) => {
                firstToken();
                events.toolCall(event);
            }
        }));
        const base = respond("in_progress", [], null);
        send("response.created", {response: base});
        send("response.in_progress", {response: base});
        // A refusal (full queue, prompt too long) was thrown by submit: the stream starts now.
        await streamResponse(ctx, stream, {started: Promise.resolve(), produce: async () => {
            const [choice] = await run.done;
            Object.assign(state.logFields, {prompt_tokens: run.promptTokens, completion_tokens: choice.completionTokens});
            const output = toOutputItems(ids, choice, options);
            events.finish(output);
            const status = choice.finishReason === "length" ? "incomplete" : "completed";
            const response = finish(respond(status, output, toUsage(run.promptTokens, choice)));
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

/** GET /v1/responses/{id}: a stored response (only to the key that created it), its JSON as stored. */
export function retrieveResponseHandler(store: ResponseStore): RouterMiddleware {
    return (ctx) => {
        const json = stored(store, ctx).json;
        ctx.type = "application/json";
        ctx.body = json;
    };
}

/** DELETE /v1/responses/{id}. */
export function deleteResponseHandler(store: ResponseStore): RouterMiddleware {
    return (ctx) => {
        const found = stored(store, ctx);
        store.delete(found.id, found.owner);
        ctx.body = {id: found.id, object: "response", deleted: true};
    };
}

/** GET /v1/responses/{id}/input_items: the input it was given, newest first (OpenAI's default order), or oldest first with `order=asc`. */
export function inputItemsHandler(store: ResponseStore): RouterMiddleware {
    return (ctx) => {
        const {body, length} = ResponseStore.inputItemsBody(stored(store, ctx), ctx.query.order === "asc");
        ctx.type = "application/json";
        ctx.body = body;
        ctx.length = length;
    };
}
