import type { Middleware } from "koa";
import { koaBody } from "koa-body";
import { ApiError } from "./ApiError.js";
import { findShapeViolation, type JsonShapeBounds, type JsonShapeViolation } from "./findShapeViolation.js";
import { parseJsonOffThread } from "./parseJsonOffThread.js";

/**
 * Deepest nesting of objects/arrays a request body may have. Real requests stay far below it (a
 * chat request with a json_schema of 30 nested objects is about 64 deep, since each schema level
 * adds `properties` and the name); see findShapeViolation for why there is a bound at all.
 */
export const maxJsonDepth = 128;

/**
 * JSON request bodies only. A POST without a JSON content type is a 415 (not silently an empty
 * body); a body past `limit` is a 413 naming the limit, one that does not parse a 400, one nested
 * deeper than maxJsonDepth or holding more than `bounds.maxValues` values (a route's own bound, see
 * findShapeViolation) a 400 naming the field.
 */
export function jsonBody(limit: string, bounds: {maxValues?: number} = {}): Middleware {
    const shape: JsonShapeBounds = {maxDepth: maxJsonDepth, ...bounds};
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
    const limitBytes = byteLimit(limit);
    return async (ctx, next) => {
        if (ctx.method !== "POST" && ctx.method !== "PUT" && ctx.method !== "PATCH")
            return next();
        const contentType = ctx.get("Content-Type");
        if (!isJsonMediaType(contentType))
            throw ApiError.unsupportedMediaType(contentType || undefined);
        if (ctx.get("Content-Length") === "0" || (ctx.get("Content-Length") === "" && ctx.get("Transfer-Encoding") === ""))
            throw ApiError.invalidRequest("The request body is empty: send a JSON object.", null, "invalid_json");
        // A large body is decoded and parsed in a worker thread: on the main thread a 10 MB body held every
        // other request ~30 ms (three at once, /health waited over 100 ms).
        const length = Number(ctx.get("Content-Length"));
        if (Number.isSafeInteger(length) && length > offThreadBytes) {
            if (length > limitBytes)
                throw ApiError.payloadTooLarge(limit);
            let parsed: Awaited<ReturnType<typeof parseJsonOffThread>>;
            try {
                parsed = await parseJsonOffThread(await readBody(ctx.req, limitBytes, limit), shape);
            } catch (error) {
                if (error instanceof ApiError)
                    throw error;
                throw toBodyError({}, limit);
            }
            if ("violation" in parsed)
                throw toShapeError(parsed.violation, shape);
            // As the body parser's strict mode: an object or an array, never a bare value.
            if (parsed.value === null || typeof parsed.value !== "object")
                throw toBodyError({}, limit);
            ctx.request.body = parsed.value as typeof ctx.request.body;
            return next();
        }
        return parse(ctx, () => {
            const violation = findShapeViolation(ctx.request.body, shape);
            if (violation != null)
                throw toShapeError(violation, shape);
            return next();
        });
    };
}

/** Bodies above this are parsed off the main thread (smaller ones cost less than the hand-over). */
const offThreadBytes = 1024 * 1024;

/** The request's bytes, at most `limit` of them (more: 413 naming `limitText`). */
async function readBody(request: AsyncIterable<Buffer>, limit: number, limitText: string): Promise<Uint8Array> {
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of request) {
        total += chunk.length;
        if (total > limit)
            throw ApiError.payloadTooLarge(limitText);
        chunks.push(chunk);
    }
    return new Uint8Array(Buffer.concat(chunks, total));
}

/** "10mb", "512kb", "2048" (bytes) as a number of bytes (1 mb = 1024 * 1024), as the body parser reads it. */
function byteLimit(limit: string): number {
    const match = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?\s*$/i.exec(limit);
    if (match == null)
        return Infinity;
    const unit = {b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3}[(match[2] ?? "b").toLowerCase() as "b" | "kb" | "mb" | "gb"];
    return Math.floor(Number(match[1]) * unit);
}

function toShapeError(violation: JsonShapeViolation, bounds: JsonShapeBounds): ApiError {
    if (violation.kind === "values") {
        const where = violation.field == null ? "" : ` (most of them in '${violation.field}')`;
        return ApiError.invalidRequest(
            `The request body holds more than ${bounds.maxValues!.toLocaleString("en-US")} JSON values${where}, more than this endpoint accepts. Send fewer items.`,
            violation.field, "too_many_values");
    }
    const {path} = violation;
    const param = typeof path[0] === "string" ? path[0] : null;
    const shown = path.slice(0, 6).map((segment, index) => typeof segment === "number" ? `[${segment}]` : index === 0 ? segment : `.${segment}`).join("");
    return ApiError.invalidRequest(
        `The request body nests objects/arrays more than ${bounds.maxDepth} levels deep (at '${shown}...'${param == null ? "" : `, in '${param}'`}). Flatten it.`,
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
