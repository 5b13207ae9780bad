import type { Middleware } from "koa";
import { koaBody } from "koa-body";
import { ApiError } from "./ApiError.js";
import { findTooDeepPath } from "./findTooDeepPath.js";

/**
 * Deepest nesting of objects/arrays a request body may have. Real requests stay far below it (a
 * chat request with a json_schema of 30 nested objects is about 64 deep, since each schema level
 * adds `properties` and the name); see findTooDeepPath for why there is a bound at all.
 */
export const maxJsonDepth = 128;

/**
 * JSON request bodies only. A POST without a JSON content type is a 415 (not silently an empty
 * body); a body past `limit` is a 413 naming the limit, one that does not parse a 400.
 */
export function jsonBody(limit: string): Middleware {
    const parse = koaBody({
        json: true,
        jsonLimit: limit,
        jsonStrict: true,
        urlencoded: false,
        text: false,
        multipart: false,
        onError: (error) => {
            throw toBodyError(error as {status?: number, type?: string, message?: string}, limit);
        }
    });
    return async (ctx, next) => {
        if (ctx.method !== "POST" && ctx.method !== "PUT" && ctx.method !== "PATCH")
            return next();
        const contentType = ctx.get("Content-Type");
        if (!isJsonMediaType(contentType))
            throw ApiError.unsupportedMediaType(contentType || undefined);
        if (ctx.get("Content-Length") === "0" || (ctx.get("Content-Length") === "" && ctx.get("Transfer-Encoding") === ""))
            throw ApiError.invalidRequest("The request body is empty: send a JSON object.", null, "invalid_json");
        return parse(ctx, () => {
            rejectTooDeep(ctx.request.body);
            return next();
        });
    };
}

function rejectTooDeep(body: unknown) {
    const path = findTooDeepPath(body, maxJsonDepth);
    if (path == null)
        return;
    const param = typeof path[0] === "string" ? path[0] : null;
    const shown = path.slice(0, 6).map((segment, index) => typeof segment === "number" ? `[${segment}]` : index === 0 ? segment : `.${segment}`).join("");
    throw ApiError.invalidRequest(
        `The request body nests objects/arrays more than ${maxJsonDepth} levels deep (at '${shown}...'${param == null ? "" : `, in '${param}'`}). Flatten it.`,
        param, "json_too_deep");
}

/** The body parser's errors (raw-body / co-body) as the client sees them. */
function toBodyError(error: {status?: number, type?: string, message?: string}, limit: string) {
    if (error.type === "entity.too.large" || error.status === 413)
        return ApiError.payloadTooLarge(limit);
    if (error.type === "encoding.unsupported" || error.status === 415)
        return new ApiError(415, "invalid_request_error", String(error.message), {code: "unsupported_media_type"});
    return ApiError.invalidRequest(
        "We could not parse the JSON body of your request. The server expects a JSON object as the request body.",
        null, "invalid_json");
}

/**
 * `application/json` only (any parameters, e.g. charset): the body parser reads no other type, so an
 * `application/<anything>+json` would pass as an empty body and fail later as "got undefined".
 */
function isJsonMediaType(contentType: string) {
    return contentType.split(";")[0].trim().toLowerCase() === "application/json";
}
