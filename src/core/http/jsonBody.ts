import type { Middleware } from "koa";
import { parseByteSize } from "../../config.js";
import { ApiError } from "./ApiError.js";
import { declaredLength, type BodyMemory } from "./BodyMemory.js";
import { findJsonHazard } from "./findJsonHazard.js";
import { parseJsonOffThread } from "./parseJsonOffThread.js";
import { readBody } from "./readBody.js";
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
 * body); a body past `limit` is a 413 naming the limit, one that does not parse a 400. The bytes are
 * counted in `memory` while they are held (a 503 when they do not fit, before any is read when the
 * Content-Length says so).
 */
export function jsonBody(limit: string, memory: BodyMemory): Middleware {
    const limitBytes = parseByteSize(limit) ?? Infinity;
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
        let bytes: Uint8Array;
        try {
            bytes = await readBody(ctx.req, limitBytes, limit, hold);
        } finally {
            (ctx.state as RequestState).logFields.body_bytes = hold.total;
        }
        if (bytes.length === 0)
            throw emptyBody();
        const value = await parseJson(bytes);
        // Strict: an object or an array, never a bare value.
        if (value === null || typeof value !== "object")
            throw notJson();
        rejectHazard(value);
        ctx.request.body = value;
        return next();
    };
}

/** Bodies above this are parsed off the main thread (smaller ones cost less than the hand-over). */
const offThreadBytes = 1024 * 1024;
const utf8 = new TextDecoder("utf-8", {fatal: true});

/**
 * A large body is decoded and parsed in a worker thread: on the main thread a 10 MB body held every
 * other request ~30 ms (three at once, /health waited over 100 ms).
 */
async function parseJson(bytes: Uint8Array): Promise<unknown> {
    try {
        return bytes.length > offThreadBytes ? await parseJsonOffThread(bytes) : JSON.parse(utf8.decode(bytes));
    } catch {
        throw notJson();
    }
}

function emptyBody() {
    return ApiError.invalidRequest("The request body is empty: send a JSON object.", null, "invalid_json");
}

function notJson() {
    return ApiError.invalidRequest(
        "We could not parse the JSON body of your request. The server expects a JSON object as the request body.",
        null, "invalid_json");
}

function rejectHazard(body: unknown) {
    const hazard = findJsonHazard(body, maxJsonDepth);
    if (hazard == null)
        return;
    const param = typeof hazard.path[0] === "string" ? hazard.path[0] : null;
    if (hazard.problem === "prototype_key")
        throw ApiError.invalidRequest(`The request body has a '${hazard.path.at(-1)}' key (at '${shownPath(hazard.path)}'), which the server refuses (prototype poisoning).`,
            param, "invalid_json");
    throw ApiError.invalidRequest(
        `The request body nests objects/arrays more than ${maxJsonDepth} levels deep (at '${shownPath(hazard.path)}...'${param == null ? "" : `, in '${param}'`}). Flatten it.`,
        param, "json_too_deep");
}

function shownPath(path: (string | number)[]) {
    return path.slice(0, 6).map((segment, index) => typeof segment === "number" ? `[${segment}]` : index === 0 ? segment : `.${segment}`).join("");
}

/**
 * `application/json` only (any parameters, e.g. charset): the body parser reads no other type, so an
 * `application/<anything>+json` would pass as an empty body and fail later as "got undefined".
 */
function isJsonMediaType(contentType: string) {
    return contentType.split(";")[0].trim().toLowerCase() === "application/json";
}
