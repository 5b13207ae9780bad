import type { Context } from "koa";
import type { ApiError } from "../http/ApiError.js";

/**
 * A streamed response. Nothing reaches the client before `open()` (what is written until then waits in the
 * writer), so streamResponse's start phase can still answer a refusal with a plain JSON status; once the
 * headers are out, errors travel inside the response.
 */
export interface ResponseWriter {
    /** Sends the status and headers, then what was written so far. */
    open(): void;
    /** Ends a successful response. */
    end(): void;
    /** Reports an error after the headers (in-band where the format allows), then ends. */
    fail(error: ApiError): void;
    /** Ends without the success marker (the request was aborted: client gone or shutdown). */
    close(): void;
    /** Resolves when the client has taken what was written (below the socket's high-water mark) or is gone. */
    ready(): Promise<void>;
}

/**
 * Sends the status and headers at once (Koa's own response handling is switched off), keeping the
 * headers middleware already set (request id, CORS).
 */
export function openResponse(ctx: Context, headers: Record<string, string>) {
    ctx.respond = false;
    ctx.status = 200;
    ctx.res.writeHead(200, {
        ...Object.fromEntries(Object.entries(ctx.response.headers).map(([name, value]) => [name, String(value)])),
        ...headers
    });
    ctx.res.flushHeaders();
}

/** Each response's wait for 'drain' under way: writers that wait together share it (one listener pair, however many wait). */
const drains = new WeakMap<object, Promise<void>>();

/** Resolves once the socket buffer is below its high-water mark again, or the connection is gone. */
export function drained(ctx: Context): Promise<void> {
    const res = ctx.res;
    if (!res.writableNeedDrain || res.destroyed)
        return Promise.resolve();
    let waiting = drains.get(res);
    if (waiting == null) {
        waiting = new Promise((resolve) => {
            const done = () => {
                res.off("drain", done);
                res.off("close", done);
                drains.delete(res);
                resolve();
            };
            res.on("drain", done);
            res.on("close", done);
        });
        drains.set(res, waiting);
    }
    return waiting;
}
