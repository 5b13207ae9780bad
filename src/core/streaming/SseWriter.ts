import type { Context } from "koa";
import type { ApiError } from "../http/ApiError.js";

/**
 * At most two socket writes per this window; events beyond that wait for the window to end and go
 * out together. A small model produces a token every millisecond, and one socket write per token
 * cost the server ~0.1 ms of CPU, taken from the decoding thread on a 2-core machine. The first
 * events of a stream (role chunk, first token) and every token of a model slower than this still
 * go out at once.
 */
const coalesceMs = 8;

/**
 * A data-only server-sent-event stream written straight to the socket (Koa's own response
 * handling is switched off: the status and headers go out at once, before the first token).
 * While nothing else is written, a comment line is sent every `pingMs` so proxies and clients do
 * not time out during queueing or long prompt processing.
 */
export class SseStream {
    private lastWrite = 0;
    private previousWrite = 0;
    private pending = "";
    private flushTimer: NodeJS.Timeout | null = null;
    private readonly pingTimer: NodeJS.Timeout;
    private ended = false;
    private readonly openedAt = Date.now();

    constructor(private readonly ctx: Context, pingMs: number) {
        ctx.respond = false;
        ctx.status = 200;
        ctx.res.writeHead(200, {
            ...Object.fromEntries(Object.entries(ctx.response.headers).map(([name, value]) => [name, String(value)])),
            "Content-Type": "text/event-stream; charset=utf-8",
            "Cache-Control": "no-cache",
            "Connection": "keep-alive",
            "X-Accel-Buffering": "no"
        });
        ctx.res.flushHeaders();
        this.pingTimer = setInterval(() => {
            if (this.pending === "" && Date.now() - Math.max(this.lastWrite, this.openedAt) >= pingMs)
                this.write(": ping\n\n");
        }, Math.max(10, Math.floor(pingMs / 2)));
        this.pingTimer.unref();
    }

    send(data: unknown) {
        this.write(`data: ${JSON.stringify(data)}\n\n`);
    }

    /** Ends a successful stream with OpenAI's terminator. */
    done() {
        this.write("data: [DONE]\n\n");
        this.end();
    }

    /** An error after the headers went out travels in the stream, then the stream ends. */
    fail(error: ApiError) {
        this.write(`event: error\ndata: ${JSON.stringify(error.toBody())}\n\n`);
        this.end();
    }

    end() {
        if (this.ended)
            return;
        this.flush();
        this.ended = true;
        clearInterval(this.pingTimer);
        if (!this.ctx.res.destroyed)
            this.ctx.res.end();
    }

    private write(text: string) {
        if (this.ended)
            return;
        this.pending += text;
        const wait = this.previousWrite + coalesceMs - Date.now();
        if (wait <= 0)
            this.flush();
        else
            this.flushTimer ??= setTimeout(() => this.flush(), wait);
    }

    private flush() {
        if (this.flushTimer != null) {
            clearTimeout(this.flushTimer);
            this.flushTimer = null;
        }
        if (this.pending === "")
            return;
        const text = this.pending;
        this.pending = "";
        this.previousWrite = this.lastWrite;
        this.lastWrite = Date.now();
        if (!this.ctx.res.destroyed && this.ctx.res.writable)
            this.ctx.res.write(text);
    }
}
