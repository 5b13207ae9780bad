import type { Middleware } from "koa";
import type { ApiKeyStore } from "../auth/ApiKeyStore.js";
import { ApiError } from "../core/http/ApiError.js";

/** `Authorization: Bearer <key>` on every route it guards, whenever any key is configured. */
export function authMiddleware(keys: ApiKeyStore): Middleware {
    return async (ctx, next) => {
        const state = keys.state;
        if (state === "open")
            return next();
        if (state === "locked")
            throw ApiError.invalidApiKey(
                "No API key exists on this server: the last one was revoked, so every request is refused until an operator adds one " +
                "with `npm run keys -- add <name>` on the server (the server's log names its keys file).");
        const header = ctx.get("Authorization");
        const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
        if (match == null)
            throw ApiError.invalidApiKey(header === ""
                ? "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
                : "The Authorization header must have the form 'Bearer YOUR_KEY'.");
        const key = keys.verify(match[1]);
        if (key == null)
            throw ApiError.invalidApiKey(`Incorrect API key provided: ${redact(match[1])}.`);
        ctx.state.logFields.key = key.name;
        return next();
    };
}

function redact(key: string) {
    return key.length <= 8 ? "****" : `${key.slice(0, 3)}****${key.slice(-4)}`;
}
