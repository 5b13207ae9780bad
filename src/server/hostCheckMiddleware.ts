import type { Middleware } from "koa";
import type { ApiKeyStore } from "../auth/ApiKeyStore.js";
import { ApiError } from "../core/http/ApiError.js";
import { isLoopbackHost } from "./isLoopbackHost.js";

/**
 * DNS rebinding guard. A server without keys answers anyone who reaches it, and a web page can
 * reach 127.0.0.1 through a hostile name that resolves there (Ollama's CVE-2024-28224): the
 * browser then sends that name as `Host`. So, while no key exists, only loopback names and
 * addresses (and names the operator allowed, e.g. behind a reverse proxy) are served. With keys
 * the check is off: a page cannot know the key. (Without keys the server binds only to loopback.)
 */
export function hostCheckMiddleware(keys: ApiKeyStore, allowedHosts: readonly string[]): Middleware {
    return (ctx, next) => {
        const host = ctx.get("Host");
        // No Host at all is an HTTP/1.0 client, never a browser.
        if (host === "" || keys.state !== "open")
            return next();
        const name = hostnameOf(host);
        if (isLoopbackHost(name) || allowedHosts.includes(name) || allowedHosts.includes(host.toLowerCase()))
            return next();
        throw new ApiError(403, "invalid_request_error",
            `Host '${host}' is not allowed: without API keys this server only answers requests addressed to localhost, 127.0.0.1 or [::1] ` +
            "(protection against DNS rebinding). Behind a reverse proxy, add the name with --allowed-hosts / ALLOWED_HOSTS, or add an API key.",
            {code: "host_not_allowed"});
    };
}

/** `name:port` / `[v6]:port` / `name` -> the lowercase name or address (brackets kept off). */
export function hostnameOf(host: string) {
    const lower = host.toLowerCase();
    if (lower.startsWith("["))
        return lower.slice(0, lower.indexOf("]") + 1);
    return lower.replace(/:\d*$/, "");
}
