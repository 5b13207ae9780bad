import type { Middleware } from "koa";
import { koaBody } from "koa-body";
import { ApiError } from "../core/http/ApiError.js";

/**
 * JSON request bodies only. A POST without a JSON content type is a 415 (not silently an empty
 * body); parse failures and oversized bodies are thrown and mapped by the error middleware.
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
            throw error;
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
        return parse(ctx, next);
    };
}

function isJsonMediaType(contentType: string) {
    const mediaType = contentType.split(";")[0].trim().toLowerCase();
    return mediaType === "application/json" || (mediaType.startsWith("application/") && mediaType.endsWith("+json"));
}
