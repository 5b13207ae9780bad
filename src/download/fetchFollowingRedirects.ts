import { DownloadError } from "./DownloadError.js";

export type HubResponse = {
    /** The final, non-redirect response. */
    response: Response;
    /** sha256 the hub announced for an LFS file (`X-Linked-Etag`, from the first hop that had one). */
    linkedSha256: string | null;
    /** Size the hub announced for an LFS file (`X-Linked-Size`). */
    linkedSize: number | null;
};

const redirectStatuses = new Set([301, 302, 303, 307, 308]);

/**
 * GET with redirects followed by hand. fetch's own following would hide the hub's first answer,
 * and that 302 is where the hub puts `X-Linked-Etag` (the LFS file's sha256) before sending us
 * to its CDN. `Authorization` goes to the hub's origin only, never to a CDN on another origin
 * (the same rule fetch applies), and `Range` is kept on every hop.
 */
export async function fetchFollowingRedirects(url: string, headers: Record<string, string>, signal: AbortSignal, fetchImpl: typeof fetch = fetch): Promise<HubResponse> {
    let current = new URL(url);
    const origin = current.origin;
    let sameOrigin = true;
    let linkedSha256: string | null = null;
    let linkedSize: number | null = null;
    for (let hop = 0; hop < 10; hop++) {
        sameOrigin &&= current.origin === origin;
        const sent = {...headers};
        if (!sameOrigin)
            delete sent.Authorization;
        const response = await fetchImpl(current, {headers: sent, redirect: "manual", signal});
        linkedSha256 ??= sha256OfEtag(response.headers.get("x-linked-etag"));
        linkedSize ??= sizeOf(response.headers.get("x-linked-size"));
        const location = response.headers.get("location");
        if (!redirectStatuses.has(response.status) || location == null)
            return {response, linkedSha256, linkedSize};
        await response.body?.cancel();
        current = redirectTarget(location, current, new URL(url));
    }
    throw new DownloadError("http", `Too many redirects downloading ${url}.`);
}

/**
 * Where a redirect may go: `https:` anywhere (the hub sends files to its CDN), `http:` only to the
 * configured endpoint's own host name (any port) when that endpoint is plain http (a mirror on a LAN); never `data:`,
 * `file:` or any other scheme, whose "content" would otherwise be saved as the file.
 */
function redirectTarget(location: string, from: URL, start: URL): URL {
    let target: URL;
    try {
        target = new URL(location, from);
    } catch {
        throw new DownloadError("http", `The hub redirected ${start.pathname} to an invalid URL (${shown(location)}); refusing it.`);
    }
    if (target.protocol === "https:" || (target.protocol === "http:" && start.protocol === "http:" && target.hostname === start.hostname))
        return target;
    throw new DownloadError("http", `The hub redirected ${start.pathname} to a '${target.protocol}' URL (${shown(location)}); only https: ` +
        `(or http: to the HF_ENDPOINT host ${start.hostname}, when HF_ENDPOINT is http) is followed. Nothing was saved.`);
}

function shown(location: string) {
    return location.length > 80 ? `${location.slice(0, 80)}...` : location;
}

/** `"abc…"` or `W/"abc…"` -> `abc…` when it is a sha256; other etags (git blob sha1s) are not. */
function sha256OfEtag(etag: string | null) {
    const value = etag?.replace(/^W\//, "").replace(/"/g, "").trim().toLowerCase();
    return value != null && /^[0-9a-f]{64}$/.test(value) ? value : null;
}

function sizeOf(header: string | null) {
    return header != null && /^\d+$/.test(header) ? Number(header) : null;
}
