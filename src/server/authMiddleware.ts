import type { Middleware } from "koa";
import type { ApiKeyStore } from "../auth/ApiKeyStore.js";
import { ApiError } from "../core/http/ApiError.js";
import type { RequestState } from "../core/http/RequestState.js";

/**
 * `Authorization: Bearer <key>` on every route it guards, whenever any key is configured. `admin`: the route is an
 * administrator's (the management API): a user's key gets a 403 in OpenAI's error shape. Without keys (loopback
 * only) everything is allowed.
 */
export function authMiddleware(keys: ApiKeyStore, access: "key" | "admin" = "key"): Middleware {
    return async (ctx, next) => {
        const state = keys.state;
        if (state === "open")
            return next();
        if (state === "locked")
            throw ApiError.invalidApiKey(
                "No API key exists on this server: the last one was revoked, so every request is refused until an operator adds one " +
                "with `npm run keys -- add <name>` on the server (the server's log names its keys file).");
        const header = ctx.get("Authorization");
        // Anthropic's SDKs send the key as `x-api-key`; OpenAI's as a Bearer token. Either works on every route.
        const apiKeyHeader = ctx.get("x-api-key").trim();
        const presented = header === "" && apiKeyHeader !== "" ? apiKeyHeader : /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
        if (presented == null)
            throw ApiError.invalidApiKey(header === ""
                ? "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as x-api-key."
                : "The Authorization header must have the form 'Bearer YOUR_KEY'.");
        const key = keys.verify(presented);
        if (key == null)
            throw ApiError.invalidApiKey(`Incorrect API key provided: ${redact(presented)}.`);
        const requestState: RequestState = ctx.state;
        requestState.logFields.key = key.name;
        if (access === "admin" && key.role !== "admin")
            throw new ApiError(403, "invalid_request_error",
                `The API key '${key.name}' is a user's key: managing models (load, unload, pull) needs an administrator's key ` +
                "(made with `npm run keys -- add <name> --admin` on the server). Users may list the models.",
                {code: "insufficient_permissions"});
        requestState.keyHash = key.hash;
        requestState.keyRole = key.role;
        return next();
    };
}

function redact(key: string) {
    return key.length <= 8 ? "****" : `${key.slice(0, 3)}****${key.slice(-4)}`;
}
