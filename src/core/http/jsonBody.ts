import type { Context, Middleware } from "koa";
import { parseByteSize } from "../../settings/settingKinds.js";
import { ApiError } from "./ApiError.js";
import { declaredLength, type BodyMemory } from "./BodyMemory.js";
import { continueBody } from "./continueBody.js";
import { describeJsonHazard, findJsonHazard, type JsonHazard } from "./findJsonHazard.js";
import type { JsonBounds } from "./jsonParseThreadMain.js";
import { parseJsonOffThreadMoving } from "./parseJsonOffThread.js";
import { movedLength, putLongStrings, type MovedString } from "../workers/movedStrings.js";
import { joinChunks, readBody, type BodyChunks } from "./readBody.js";
import type { RequestState } from "./RequestState.js";

declare module "koa" {
    interface Request {
        /** The parsed request body (jsonBody: a JSON object or array; multipartBody: the form's fields). */
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        body?: any;
    }
}

/**
 * Deepest nesting of objects/arrays a request body may have. Real requests stay far below it (a
 * chat request with a json_schema of 30 nested objects is about 64 deep, since each schema level
 * adds `properties` and the name); see findJsonHazard for why there is a bound at all.
 */
export const maxJsonDepth = 128;

/**
 * JSON request bodies only. A POST without a JSON content type is a 415 (not silently an empty
 * body); a body past `limit` is a 413 naming the limit, one that does not parse a 400, one with a hazard
 * (findJsonHazard: nested deeper than maxJsonDepth, a prototype key, more than `bounds.maxValues` values, a
 * route's own bound) a 400 naming the field. The bytes are counted in `memory` while they are held (a 503
 * when they do not fit, before any is read when the Content-Length says so).
 */
export function jsonBody(limit: string, memory: BodyMemory, bounds: {maxValues?: number, maxItems?: Readonly<Record<string, number>>, maxFieldValues?: Readonly<Record<string, number>>} = {}): Middleware {
    const limitBytes = parseByteSize(limit) ?? Infinity;
    const shape: JsonBounds = {maxDepth: maxJsonDepth, maxValues: bounds.maxValues ?? Infinity, maxItems: bounds.maxItems, maxFieldValues: bounds.maxFieldValues};
    return async (ctx, next) => {
        if (ctx.method !== "POST" && ctx.method !== "PUT" && ctx.method !== "PATCH")
            return next();
        const contentType = ctx.get("Content-Type");
        if (!isJsonMediaType(contentType))
            throw ApiError.unsupportedMediaType(contentType || undefined);
        if (ctx.get("Content-Length") === "0" || (ctx.get("Content-Length") === "" && ctx.get("Transfer-Encoding") === ""))
            throw emptyBody();
        if (declaredLength(ctx.req) > limitBytes)
            throw ApiError.payloadTooLarge(limit);
        const hold = memory.admit(ctx.req, ctx.res);
        continueBody(ctx.req, ctx.res);
        let body: BodyChunks;
        try {
            body = await readBody(ctx.req, limitBytes, limit, hold);
        } finally {
            (ctx.state as RequestState).logFields.body_bytes = hold.total;
        }
        if (body.total === 0)
            throw emptyBody();
        const {value, strings} = await parseJson(body, shape);
        // Strict: an object or an array, never a bare value.
        if (value === null || typeof value !== "object")
            throw notJson();
        if (strings.length === 0)
            ctx.request.body = value;
        else
            deferLongStrings(ctx, value, strings);
        return next();
    };
}

/** Bodies above this are parsed off the main thread: a 960 KB one (32,000 messages) held it 40 ms with its hazard check; the hand-over costs about 1 ms. */
const offThreadBytes = 256 * 1024;
const utf8 = new TextDecoder("utf-8", {fatal: true});

/**
 * The body's value, checked for hazards. A large body is decoded, parsed and checked in a worker thread: on
 * the main thread a 10 MB body held every other request ~30 ms (three at once, /health waited over 100 ms).
 */
async function parseJson(body: BodyChunks, bounds: JsonBounds): Promise<{value: unknown, strings: MovedString[]}> {
    let parsed: {value: unknown, strings: MovedString[]} | {hazard: JsonHazard};
    try {
        if (body.total > offThreadBytes)
            parsed = await parseJsonOffThreadMoving(body.chunks, bounds);
        else {
            const value: unknown = JSON.parse(utf8.decode(joinChunks(body)));
            const hazard = findJsonHazard(value, bounds.maxDepth, bounds.maxValues, bounds.maxItems, bounds.maxFieldValues);
            parsed = hazard == null ? {value, strings: []} : {hazard};
        }
    } catch {
        throw notJson();
    }
    if ("hazard" in parsed)
        throw hazardError(parsed.hazard, bounds);
    return parsed;
}

/**
 * The body's long strings are made strings again when `ctx.request.body` is first read, not before: until then they
 * are bytes (`state.longStrings` says where and how long), so a request refused from their sizes (earlyPromptFloor)
 * costs the main thread none of their memory. Whatever reads the body gets it whole, as if it had been parsed here.
 */
function deferLongStrings(ctx: Context, value: object, strings: MovedString[]) {
    const state = ctx.state as RequestState;
    state.longStrings = {value, strings: strings.map((moved) => ({path: moved.path, length: movedLength(moved)}))};
    const settle = (body: unknown) => {
        state.longStrings = undefined;
        Object.defineProperty(ctx.request, "body", {value: body, writable: true, enumerable: true, configurable: true});
        return body;
    };
    Object.defineProperty(ctx.request, "body", {
        enumerable: true, configurable: true,
        get: () => settle(putLongStrings(value, strings)),
        set: settle
    });
}

function emptyBody() {
    return ApiError.invalidRequest("The request body is empty: send a JSON object.", null, "invalid_json");
}

function notJson() {
    return ApiError.invalidRequest(
        "We could not parse the JSON body of your request. The server expects a JSON object as the request body.",
        null, "invalid_json");
}

function hazardError(hazard: JsonHazard, bounds: JsonBounds): ApiError {
    // The words the route's schema validation uses for the same bound (describeAjvError's maxItems).
    if (hazard.problem === "too_many_items")
        return ApiError.invalidRequest(`Invalid '${hazard.path[0]}': expected an array with maximum length ${hazard.limit}, but got an array with length ${hazard.length} instead.`, hazard.path[0]);
    const param = typeof hazard.path[0] === "string" ? hazard.path[0] : null;
    const problem = `The request body ${describeJsonHazard(hazard, bounds)}`;
    if (hazard.problem === "prototype_key")
        return ApiError.invalidRequest(`${problem} (at '${shownPath(hazard.path)}').`, param, "invalid_json");
    if (hazard.problem === "field_too_large") {
        const at = dottedPath(hazard.path);
        return ApiError.invalidRequest(`Invalid '${at}': '${hazard.field}' holds more than ${hazard.limit.toLocaleString("en-US")} JSON values, more than this endpoint accepts in it.`,
            at, "too_many_values");
    }
    if (hazard.problem === "too_many_values")
        return ApiError.invalidRequest(`${problem}${param == null ? "" : ` (most of them in '${param}')`}, more than this endpoint accepts. Send fewer items.`,
            param, "too_many_values");
    return ApiError.invalidRequest(`${problem} (at '${shownPath(hazard.path)}...'${param == null ? "" : `, in '${param}'`}). Flatten it.`, param, "json_too_deep");
}

/** A path as the field names of validation errors give it (`response_format.json_schema.schema.enum`, `messages[2].content`). */
function dottedPath(path: (string | number)[]) {
    return path.map((segment, index) => typeof segment === "number" ? `[${segment}]` : index === 0 ? segment : `.${segment}`).join("");
}

function shownPath(path: (string | number)[]) {
    return dottedPath(path.slice(0, 6));
}

/**
 * `application/json` only (any parameters, e.g. charset): the body parser reads no other type, so an
 * `application/<anything>+json` would pass as an empty body and fail later as "got undefined".
 */
function isJsonMediaType(contentType: string) {
    return contentType.split(";")[0].trim().toLowerCase() === "application/json";
}
