import type http from "node:http";

/**
 * Slow or absent readers: a response with bytes waiting (in Node's buffer or the socket's) that the
 * client has not taken any of for `stallMs` is cut (the socket destroyed: its buffers are freed, and
 * the request's abort frees its sequence or worker). A response with nothing waiting is never cut,
 * however long it takes to produce (a generation may run for minutes without a byte).
 * Polls byte counts, as watchBodyIdle does, so it adds no listener on the data path.
 */
export function watchWriteStall(response: http.ServerResponse, stallMs: number): void {
    const socket = response.socket;
    if (socket == null)
        return;
    let lastBytes = socket.bytesWritten;
    let lastProgress = performance.now();
    const timer = setInterval(() => {
        if (socket.destroyed || response.writableFinished) {
            clearInterval(timer);
            return;
        }
        const waiting = response.writableLength > 0 || socket.writableLength > 0;
        if (!waiting || socket.bytesWritten !== lastBytes) {
            lastBytes = socket.bytesWritten;
            lastProgress = performance.now();
        } else if (performance.now() - lastProgress >= stallMs) {
            clearInterval(timer);
            socket.destroy();
        }
    }, Math.max(10, Math.min(1000, stallMs / 4)));
    timer.unref();
    response.once("close", () => clearInterval(timer));
}
