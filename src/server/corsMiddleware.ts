import type { Middleware } from "koa";
import { originAllowed } from "./originAllowed.js";

/**
 * Request headers a page may send: the openai and Anthropic clients' own (X-Stainless-*, OpenAI-*, X-Api-Key,
 * Anthropic-*) and the usual ones.
 */
const allowedRequestHeader = /^(authorization|content-type|accept|accept-language|x-request-id|x-api-key|x-stainless-[a-z0-9-]+|openai-[a-z0-9-]+|anthropic-[a-z0-9-]+)$/;
const baseRequestHeaders = ["Authorization", "Content-Type", "Accept", "OpenAI-Organization", "OpenAI-Project", "OpenAI-Beta"];
/** Response headers a page may read: what clients use for retries and for reporting problems. */
const exposedHeaders = "Retry-After, X-Request-Id, Request-Id, X-Should-Retry";
const preflightMaxAgeSeconds = 600;

/**
 * CORS for browser clients (local web UIs). Written here rather than taken from @koa/cors, which
 * cannot match origins by pattern ("any port of localhost") or allow a family of request headers
 * (the openai client sends a dozen X-Stainless-* headers that change between versions).
 *
 * Runs before auth: a preflight never carries `Authorization`, so it is answered (204) without a
 * key. An origin that is not allowed gets no CORS header at all, so the browser blocks the page.
 */
export function corsMiddleware(origins: readonly string[]): Middleware {
    return async (ctx, next) => {
        ctx.vary("Origin");
        const origin = ctx.get("Origin");
        const allowed = origin !== "" && originAllowed(origin, origins);
        const preflight = ctx.method === "OPTIONS" && origin !== "" && ctx.get("Access-Control-Request-Method") !== "";
        if (preflight) {
            ctx.vary("Access-Control-Request-Method");
            ctx.vary("Access-Control-Request-Headers");
            ctx.status = 204;
            if (!allowed)
                return;
            const requested = ctx.get("Access-Control-Request-Headers").split(",").map((name) => name.trim()).filter((name) => name !== "");
            const headers = new Set([...baseRequestHeaders, ...requested.filter((name) => allowedRequestHeader.test(name.toLowerCase()))]);
            ctx.set({
                "Access-Control-Allow-Origin": origin,
                "Access-Control-Allow-Methods": "GET, POST, DELETE, OPTIONS",
                "Access-Control-Allow-Headers": [...headers].join(", "),
                "Access-Control-Max-Age": String(preflightMaxAgeSeconds)
            });
            // Chrome's Private Network Access: a page from a public origin asking to reach this machine.
            if (ctx.get("Access-Control-Request-Private-Network") === "true")
                ctx.set("Access-Control-Allow-Private-Network", "true");
            return;
        }
        if (allowed)
            ctx.set({"Access-Control-Allow-Origin": origin, "Access-Control-Expose-Headers": exposedHeaders});
        return next();
    };
}
