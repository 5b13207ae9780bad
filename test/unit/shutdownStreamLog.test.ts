import http from "node:http";
import net, { type AddressInfo } from "node:net";
import Koa from "koa";
import { afterEach, describe, expect, it } from "vitest";
import type { RequestState } from "../../src/core/http/RequestState.js";
import { ServerShutdownError } from "../../src/core/http/ServerShutdownError.js";
import { ChunkedBodyWriter } from "../../src/core/streaming/ChunkedBodyWriter.js";
import type { ResponseWriter } from "../../src/core/streaming/ResponseWriter.js";
import { SseWriter } from "../../src/core/streaming/SseWriter.js";
import { streamResponse } from "../../src/core/streaming/streamResponse.js";
import { createLogger } from "../../src/logger.js";
import { requestContext } from "../../src/server/requestContext.js";
import { toApiError } from "../../src/server/toApiError.js";

// A stream the shutdown's grace ends is logged as a shutdown abort with the status that went out (200), as
// docs/deployment.md says. A raw audio stream's body is cut (the connection destroyed, its last chunk never sent): when
// its client was still taking the earlier chunks, the writer was waiting for the socket to drain, the cut's 'close'
// came first, and the request was logged as the client's going away (status=499 disconnected=true), unlike every
// other stream cut at shutdown (found by a user trial: a player reads speech at playback speed, behind the server).
// The stream here writes until the socket is full, whatever its buffers' sizes, and the client never reads: the
// writer is waiting for 'drain' when the grace ends, by construction.
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
    await close?.();
    close = undefined;
});

/**
 * A server whose every request is a stream of `kind` writing 64 KB at a time until its request is aborted (`behind()`
 * once the socket is full), its log lines going to `log`.
 */
async function startStreamingApp(kind: "audio" | "sse", shutdown: AbortSignal, log: (line: string) => void, behind: () => void) {
    const app = new Koa();
    app.silent = true;
    app.use(requestContext(createLogger("info", log), shutdown, (error) => toApiError(error)));
    app.use(async (ctx) => {
        const state = ctx.state as RequestState;
        const chunk = new Uint8Array(64 * 1024).fill(7);
        const audio = kind === "audio" ? new ChunkedBodyWriter(ctx, "audio/pcm") : null;
        const sse = kind === "sse" ? new SseWriter(ctx, {pingMs: 60_000}) : null;
        await streamResponse<ResponseWriter>(ctx, audio ?? sse!, {started: Promise.resolve(), produce: async () => {
            for (;;) {
                let written: Promise<void>;
                if (audio != null) {
                    written = audio.write(chunk);
                } else {
                    sse!.send({type: "speech.audio.delta", audio: Buffer.from(chunk).toString("base64")}, "speech.audio.delta");
                    written = sse!.ready();
                }
                if (ctx.res.writableNeedDrain)
                    behind();
                await written;
                // As the speech handler's queue of chunks rejects once its request is aborted.
                state.signal.throwIfAborted();
            }
        }});
    });
    const server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    close = () => new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
    });
    return (server.address() as AddressInfo).port;
}

describe("a stream cut by the shutdown's grace while its client is behind", () => {
    for (const kind of ["audio", "sse"] as const) {
        it(`${kind}: is logged as a shutdown abort with the status that went out (200), not as a client that went away (499)`, async () => {
            const shutdown = new AbortController();
            let requestLogged!: (line: string) => void;
            const logged = new Promise<string>((resolve) => requestLogged = resolve);
            let isBehind!: () => void;
            const behind = new Promise<void>((resolve) => isBehind = resolve);
            const port = await startStreamingApp(kind, shutdown.signal, (line) => line.includes("GET /speech") && requestLogged(line), isBehind);
            // A client that sends its request and never reads.
            const socket = net.connect(port, "127.0.0.1", () => socket.write(`GET /speech HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`));
            socket.pause();
            socket.on("error", () => {});
            try {
                await behind;
                shutdown.abort(new ServerShutdownError(100));
                const line = await logged;
                expect(line).toContain(" INFO ");
                expect(line).toContain("status=200");
                expect(line).toContain('aborted="shutdown"');
                expect(line).not.toContain("disconnected");
            } finally {
                socket.destroy();
            }
        });
    }
});
