import type { Context } from "koa";
import type { ApiError } from "../http/ApiError.js";
import { drained, openResponse, type ResponseWriter } from "./ResponseWriter.js";

/**
 * A binary response body sent as it is produced (chunked transfer encoding), e.g. audio sentence by
 * sentence. `write` waits while the client has not taken the previous chunks, so a slow client slows
 * the producer down instead of filling the server's memory. An error after the headers cannot be
 * said in a binary body: the connection is cut before the final chunk, which clients report as an
 * incomplete response rather than taking a truncated body for a whole one.
 */
export class ChunkedBodyWriter implements ResponseWriter {
    private ended = false;
    private opened = false;
    /** Chunks written before `open()`. */
    private waiting: Uint8Array[] = [];

    constructor(private readonly ctx: Context, private readonly contentType: string) {}

    open() {
        if (this.opened || this.ended)
            return;
        this.opened = true;
        openResponse(this.ctx, {"Content-Type": this.contentType, "Cache-Control": "no-cache", "X-Accel-Buffering": "no"});
        for (const chunk of this.waiting.splice(0))
            this.ctx.res.write(chunk);
    }

    async write(chunk: Uint8Array): Promise<void> {
        if (this.ended || chunk.length === 0)
            return;
        if (!this.opened) {
            this.waiting.push(chunk);
            return;
        }
        const res = this.ctx.res;
        if (res.destroyed || !res.writable)
            return;
        res.write(chunk);
        await drained(this.ctx);
    }

    ready(): Promise<void> {
        return this.opened ? drained(this.ctx) : Promise.resolve();
    }

    end() {
        if (this.ended)
            return;
        this.ended = true;
        if (this.opened && !this.ctx.res.destroyed)
            this.ctx.res.end();
    }

    fail(_error: ApiError) {
        this.close();
    }

    /** A body cut short must not look whole: the connection is closed without the final chunk. */
    close() {
        if (this.ended)
            return;
        this.ended = true;
        this.waiting = [];
        if (this.opened)
            this.ctx.res.destroy();
    }
}
