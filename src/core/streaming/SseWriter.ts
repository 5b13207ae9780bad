import type { Context } from "koa";
import type { ApiError } from "../http/ApiError.js";
import { drained, openResponse, type ResponseWriter } from "./ResponseWriter.js";

export type SseWriterOptions = {
    /** A comment line goes out after this long without any other write, so proxies and clients do not time out. */
    pingMs: number;
    /**
     * At most two socket writes per this window; later events wait for the window to end and go out
     * together. For token streams: a small model produces a token every millisecond, and one socket
     * write per token cost ~0.1 ms of CPU taken from the decoding thread on a 2-core machine. 0 = write at once.
     */
    coalesceMs?: number;
    /** What a client that stops reading may leave buffered; past it the response is cut (which aborts the request). */
    maxBufferedBytes?: number;
    /**
     * Written by `end()`, and after the error event of `fail()`: OpenAI's chat and completions streams end with
     * `data: [DONE]` either way; its image and speech streams have none.
     */
    terminator?: string;
    /** The data of the event that reports a failure after the headers; default OpenAI's error body. */
    errorBody?: (error: ApiError) => unknown;
    /** That event's name; default `error` (the Responses API's is `response.failed`). */
    errorEvent?: string;
};

const defaultMaxBufferedBytes = 16 * 1024 * 1024;

/**
 * A server-sent-event response (opened by streamResponse's start phase; events sent before wait in it):
 * data-only events (chat) or named ones (`event: image_generation.partial_image`),
 * comment pings, an `error` event (then the terminator, if any) for failures after the headers, a shutdown's
 * included, and a bounded buffer: producers
 * that can wait call `ready()`; one that cannot (a token stream) is cut off when a client that stopped
 * reading has `maxBufferedBytes` waiting, instead of growing the server's memory without bound.
 */
export class SseWriter implements ResponseWriter {
    private lastWrite = 0;
    private previousWrite = 0;
    private pending = "";
    private flushTimer: NodeJS.Timeout | null = null;
    private pingTimer: NodeJS.Timeout | null = null;
    private ended = false;
    private opened = false;
    private openedAt = 0;

    constructor(private readonly ctx: Context, private readonly options: SseWriterOptions) {}

    open() {
        if (this.opened || this.ended)
            return;
        this.opened = true;
        this.openedAt = Date.now();
        openResponse(this.ctx, {
            "Content-Type": "text/event-stream; charset=utf-8",
            "Cache-Control": "no-cache",
            "Connection": "keep-alive",
            "X-Accel-Buffering": "no"
        });
        this.pingTimer = setInterval(() => {
            if (this.pending === "" && Date.now() - Math.max(this.lastWrite, this.openedAt) >= this.options.pingMs)
                this.write(": ping\n\n");
        }, Math.max(10, Math.floor(this.options.pingMs / 2)));
        this.pingTimer.unref();
        this.flush();
    }

    /** One event: `data` as JSON, with an `event:` line when named. */
    send(data: unknown, event?: string) {
        this.write(`${event != null ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`);
    }

    ready(): Promise<void> {
        this.flush();
        return this.opened ? drained(this.ctx) : Promise.resolve();
    }

    end() {
        if (this.options.terminator != null)
            this.write(`data: ${this.options.terminator}\n\n`);
        this.close();
    }

    fail(error: ApiError) {
        if (this.ended)
            return;
        this.send(this.options.errorBody?.(error) ?? error.toBody(), this.options.errorEvent ?? "error");
        this.end();
    }

    close() {
        if (this.ended)
            return;
        this.flush();
        this.ended = true;
        if (this.pingTimer != null)
            clearInterval(this.pingTimer);
        // Never opened (the start phase failed): the error middleware answers instead.
        if (this.opened && !this.ctx.res.destroyed)
            this.ctx.res.end();
    }

    private write(text: string) {
        if (this.ended)
            return;
        this.pending += text;
        const wait = this.previousWrite + (this.options.coalesceMs ?? 0) - Date.now();
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
        if (this.pending === "" || !this.opened)
            return;
        const text = this.pending;
        this.pending = "";
        this.previousWrite = this.lastWrite;
        this.lastWrite = Date.now();
        const res = this.ctx.res;
        if (res.destroyed || !res.writable)
            return;
        res.write(text);
        if (res.writableLength > (this.options.maxBufferedBytes ?? defaultMaxBufferedBytes))
            res.destroy(new Error("The client is not reading the stream"));
    }
}
