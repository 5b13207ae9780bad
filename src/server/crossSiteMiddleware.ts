import type { Middleware } from "koa";
import { ApiError } from "../core/http/ApiError.js";
import { clipLogText } from "../logger.js";
import { originAllowed } from "./originAllowed.js";

/** Methods that change nothing on this server: served to a page of any site when it sends no Origin (links, images). */
const safeMethods = new Set(["GET", "HEAD", "OPTIONS"]);

/** What a browser says of a request; absent headers are "". */
export type BrowserHeaders = {method: string, origin: string, fetchSite: string, host: string};

/**
 * Cross-site requests are refused (403) on every route, with keys or without, before anything reads
 * their body. CORS alone does not stop them: a `multipart/form-data`, `text/plain` or urlencoded POST
 * (a form, or `fetch` with `mode: "no-cors"`) is sent without a preflight, and the server would run
 * it even though the page cannot read the answer. The rule (the same list as CORS, `--cors-origins`):
 *
 * - a request with an `Origin` is served when that origin may call the server (`--cors-origins`), is
 *   the server's own (the `Host` it was addressed by, or `--public-url`: the playground), or the
 *   browser says `Sec-Fetch-Site: same-origin` (the playground sends `Origin: null`: its pages have no
 *   referrer). Any other origin is refused, whatever the method: a page the server does not allow
 *   could not read the answer anyway;
 * - without an `Origin`, a request that changes something (any method but GET, HEAD, OPTIONS) is
 *   refused when the browser says `Sec-Fetch-Site: cross-site` or `same-site`. Browsers send an
 *   `Origin` with every such request, so this is a browser hiding it;
 * - GET and HEAD without an `Origin` are served from any site: navigations (a link to the playground,
 *   an image link opened in a tab) and `<img>` of image links need it; the GET routes change nothing
 *   and run no model, and the browser never lets the page read such an answer. (Go's
 *   `net/http.CrossOriginProtection` and the usual CSRF guards let safe methods through the same way.)
 * - no `Origin` and no `Sec-Fetch-Site`: not a browser (curl, SDKs), or one from before 2023: served.
 */
export function crossSiteMiddleware(origins: readonly string[], publicUrl: string | null): Middleware {
    return (ctx, next) => {
        const refusal = crossSiteRefusal({
            method: ctx.method, origin: ctx.get("Origin"), fetchSite: ctx.get("Sec-Fetch-Site").toLowerCase(), host: ctx.get("Host")
        }, origins, publicUrl);
        if (refusal != null)
            throw new ApiError(403, "invalid_request_error", refusal, {code: "cross_site_request"});
        return next();
    };
}

/** Why the request is refused, or null when it is served (see crossSiteMiddleware). */
function crossSiteRefusal(request: BrowserHeaders, origins: readonly string[], publicUrl: string | null): string | null {
    if (request.origin !== "") {
        if (originAllowed(request.origin, origins) || isOwnOrigin(request.origin, request.host, publicUrl) || request.fetchSite === "same-origin")
            return null;
        return `Cross-site request refused: a web page at '${clipLogText(request.origin, 200)}' may not call this server. ` +
            "Its operator can allow that origin with --cors-origins / CORS_ORIGINS.";
    }
    if (safeMethods.has(request.method) || request.fetchSite === "" || request.fetchSite === "same-origin" || request.fetchSite === "none")
        return null;
    return `Cross-site request refused: a web page of another site (Sec-Fetch-Site: ${clipLogText(request.fetchSite, 40)}) sent ${request.method} without an Origin.`;
}

/** Whether `origin` is the server's own: the Host the request was addressed to (any scheme: TLS may end at a proxy), or `--public-url`. */
function isOwnOrigin(origin: string, host: string, publicUrl: string | null) {
    let url: URL;
    try {
        url = new URL(origin);
    } catch {
        return false;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:")
        return false;
    if (publicUrl != null && new URL(publicUrl).origin === url.origin)
        return true;
    // A Host of name and port only (no user info, path or query that a URL would read past).
    if (!/^[a-z0-9.\-]+(:\d+)?$|^\[[0-9a-f:.]+\](:\d+)?$/i.test(host))
        return false;
    try {
        return new URL(`${url.protocol}//${host}`).host === url.host;
    } catch {
        return false;
    }
}
