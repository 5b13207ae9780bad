import type { Context } from "koa";
import type { ApiError } from "./ApiError.js";

/**
 * A data-only server-sent-event stream written straight to the socket (Koa's own response
 * handling is switched off: the status and headers go out at once, before the first token).
 * While nothing else is written, a comment line is sent every `pingMs` so proxies and clients do
 * not time out during queueing or long prompt processing.
 */
export class SseStream {
    private lastWrite = Date.now();
    private readonly pingTimer: NodeJS.Timeout;
    private ended = false;

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
            if (Date.now() - this.lastWrite >= pingMs)
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
        this.ended = true;
        clearInterval(this.pingTimer);
        if (!this.ctx.res.destroyed)
            this.ctx.res.end();
    }

    private write(text: string) {
        if (this.ended || this.ctx.res.destroyed || !this.ctx.res.writable)
            return;
        this.lastWrite = Date.now();
        this.ctx.res.write(text);
    }
}
