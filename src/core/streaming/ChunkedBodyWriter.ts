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

    constructor(private readonly ctx: Context, contentType: string) {
        openResponse(ctx, {"Content-Type": contentType, "Cache-Control": "no-cache", "X-Accel-Buffering": "no"});
    }

    async write(chunk: Uint8Array): Promise<void> {
        if (this.ended || chunk.length === 0)
            return;
        const res = this.ctx.res;
        if (res.destroyed || !res.writable)
            return;
        res.write(chunk);
        await drained(this.ctx);
    }

    ready(): Promise<void> {
        return drained(this.ctx);
    }

    end() {
        if (this.ended)
            return;
        this.ended = true;
        if (!this.ctx.res.destroyed)
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
        this.ctx.res.destroy();
    }
}
