/** A task submitted while the worker pool shuts down; answered as 503 like any engine that is going away. */
export class PoolClosedError extends Error {
    constructor() {
        super("The server is shutting down.");
        this.name = "PoolClosedError";
    }
}
