/**
 * The abort reason of every request still in flight when a graceful shutdown's grace (SHUTDOWN_TIMEOUT_MS) ends.
 * A stream that is cut by it ends with its format's terminal error (streamResponse); a request that has not
 * answered yet gets a 503 (toApiError). Logged as a shutdown abort, never as a server failure.
 */
export class ServerShutdownError extends Error {
    constructor(graceMs: number) {
        super(`The server is shutting down: this request was still running when its shutdown grace of ${graceMs} ms (SHUTDOWN_TIMEOUT_MS) ended. Retry it (on another server, or once this one is back).`);
        this.name = "ServerShutdownError";
    }
}
