import type { RouterContext, RouterMiddleware } from "@koa/router";
import { ApiError } from "../../../core/http/ApiError.js";
import { piecewiseBody } from "../../../core/http/bodyPieces.js";
import type { RequestState } from "../../../core/http/RequestState.js";
import type { ItemReference, ResponseCreateRequest } from "./ResponsesWire.js";
import { ResponseStore } from "./ResponseStore.js";

/** The identity (hash) of the key a request authenticated with (the response's owner), null on a server without keys. */
export const ownerOf = (state: RequestState) => state.keyHash ?? null;

/** The stored response `previous_response_id` names (only the key's own), or a 404 when there is none. */
export function previousOf(store: ResponseStore, request: ResponseCreateRequest, state: RequestState) {
    const previous = request.previous_response_id != null ? store.get(request.previous_response_id, ownerOf(state)) : null;
    if (request.previous_response_id != null && previous == null)
        throw new ApiError(404, "invalid_request_error", `Previous response with id '${request.previous_response_id}' not found.`,
            {param: "previous_response_id", code: "not_found"});
    return previous ?? null;
}

/**
 * The request with each `item_reference` in its input replaced by the item it names, from the key's stored responses
 * (their input and output items); one not found (deleted, evicted, never stored, another key's) is a 400 naming it.
 */
export function withReferencedItems(store: ResponseStore, request: ResponseCreateRequest, state: RequestState): ResponseCreateRequest {
    // The schema lets them in; the request's type (and everything after this) has none.
    // (`type` may be left out: an `id` and no type, role or content.)
    const reference = (item: unknown) => {
        const {type, role, content, id} = item as {type?: string, role?: unknown, content?: unknown, id?: unknown};
        return type === "item_reference" || (type == null && role == null && content == null && typeof id === "string") ? item as ItemReference : null;
    };
    if (typeof request.input === "string" || !request.input.some((item) => reference(item) != null))
        return request;
    const owner = ownerOf(state);
    return {...request, input: request.input.map((item, index) => {
        const named = reference(item);
        if (named == null)
            return item;
        const found = store.item(named.id, owner);
        if (found == null)
            throw ApiError.invalidRequest(`Item with id '${named.id}' not found (a stored response's item: its response may have been deleted or not stored).`, `input[${index}].id`);
        return found;
    })};
}

function stored(store: ResponseStore, ctx: RouterContext) {
    const found = store.get(String(ctx.params.id), ownerOf(ctx.state as RequestState));
    if (found == null)
        throw new ApiError(404, "invalid_request_error", `Response with id '${ctx.params.id}' not found.`, {param: "response_id", code: "not_found"});
    return found;
}

/** GET /v1/responses/{id}: a stored response (only to the key that created it), its JSON as stored, written a piece at a time. */
export function retrieveResponseHandler(store: ResponseStore): RouterMiddleware {
    return (ctx) => {
        const json = stored(store, ctx).json;
        ctx.type = "application/json";
        ctx.body = piecewiseBody(json);
        ctx.length = json.length;
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
