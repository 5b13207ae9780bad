import crypto from "node:crypto";
import type { RouterContext, RouterMiddleware } from "@koa/router";
import type { Middleware } from "koa";
import { ApiError } from "../../../core/http/ApiError.js";
import type { RequestState } from "../../../core/http/RequestState.js";
import { compileRequestValidator } from "../../../core/validation/compileRequestValidator.js";
import type { RouteContext } from "../../Capability.js";
import { toChatJob } from "../toChatJob.js";
import { chatTurnHandler } from "../turn/chatTurnHandler.js";
import { inClientTerms } from "../turn/runChatTurn.js";
import { runJob, type JobDone } from "../turn/runJob.js";
import { responseStream } from "./ResponseEvents.js";
import { ResponseStore } from "./ResponseStore.js";
import type { OutputItem, ResponseCreateRequest, ResponseObject, ResponseUsage } from "./ResponsesWire.js";
import { responsesSchema } from "./responsesSchema.js";
import { inputItems, toChatRequest } from "./toChatRequest.js";
import { toOutputItems, toResponse, toUsage, type OutputOptions, type ResponseIds } from "./toResponse.js";
import { toResponsesError } from "./toResponsesError.js";

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

/** The stored response `previous_response_id` names (only the key's own), or a 404 when there is none. */
function previousOf(store: ResponseStore, request: ResponseCreateRequest, state: RequestState) {
    const previous = request.previous_response_id != null ? store.get(request.previous_response_id, ownerOf(state)) : null;
    if (request.previous_response_id != null && previous == null)
        throw new ApiError(404, "invalid_request_error", `Previous response with id '${request.previous_response_id}' not found.`,
            {param: "previous_response_id", code: "not_found"});
    return previous ?? null;
}

/**
 * POST /v1/responses: OpenAI's Responses API over the chat engine (stateless per request; `store` keeps
 * the response for `previous_response_id` and GET). Streamed: the typed events with `sequence_number`,
 * in OpenAI's order (ResponseEvents). Errors of the chat path name the Responses fields (toResponsesError).
 */
export function createResponseHandler(context: RouteContext, store: ResponseStore): Middleware {
    const validate = compileRequestValidator<ResponseCreateRequest>(responsesSchema);
    return chatTurnHandler(context, (body, state) => {
        const request = validate(body);
        previousOf(store, request, state);
        return request;
    }, ({request, entry, engine, state}) => {
        const owner = ownerOf(state);
        const previous = previousOf(store, request, state);
        state.logFields.user = request.user;
        const {chat, fields, tools} = toChatRequest(request, previous != null ? ResponseStore.conversationOf(previous) : []);
        // Only errors that name a field are renamed; the others stay as they are (an unexpected one is logged as such).
        const toClientError = (error: unknown) => {
            const mapped = state.toApiError(error);
            return mapped.param != null ? toResponsesError(mapped, fields) : error;
        };
        const job = inClientTerms(toClientError, () => toChatJob(chat, engine.info));
        const id = randomId("resp");
        const ids = idsFor(id);
        const createdAt = Math.floor(Date.now() / 1000);
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
        // The finished response, stored when asked (one the store cannot keep, larger than a key's share, says so: `store: false`).
        const finished = ({promptTokens, choices: [choice]}: JobDone) => {
            const response = respond(choice.finishReason === "length" ? "incomplete" : "completed", toOutputItems(ids, choice, options), toUsage(promptTokens, choice));
            response.store &&= store.put({response, input, previous, owner});
            return response;
        };
        return {
            stream: request.stream === true,
            run: (hooks) => runJob(engine, job, state.signal, hooks),
            toClientError,
            body: finished,
            events: responseStream(respond("in_progress", [], null), ids, options, finished)
        };
    });
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
