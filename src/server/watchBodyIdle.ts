import type http from "node:http";

/**
 * Slow-loris guard for request bodies: a connection whose body stops arriving for `idleMs` is
 * closed. Node's own timers cover the headers (headersTimeout) and the whole request
 * (requestTimeout); this one is about silence, so a large body on a slow link is fine as long as it
 * moves. It watches only until the request is complete or answered, never the response: a
 * generation may take minutes without a byte from the client.
 *
 * Polls the socket's byte count instead of listening to 'data': a 'data' listener would put the
 * request stream into flowing mode behind the body parser's back.
 */
export function watchBodyIdle(request: http.IncomingMessage, response: http.ServerResponse, idleMs: number): void {
    const socket = request.socket;
    let lastBytes = socket.bytesRead;
    let lastProgress = performance.now();
    const timer = setInterval(() => {
        if (request.complete || response.writableEnded || socket.destroyed) {
            clearInterval(timer);
            return;
        }
        if (socket.bytesRead !== lastBytes) {
            lastBytes = socket.bytesRead;
            lastProgress = performance.now();
        } else if (performance.now() - lastProgress >= idleMs) {
            clearInterval(timer);
            socket.destroy();
        }
    }, Math.max(10, Math.min(1000, idleMs / 4)));
    timer.unref();
    response.once("close", () => clearInterval(timer));
}
