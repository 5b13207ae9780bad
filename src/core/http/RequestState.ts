/** What the request-context middleware puts on `ctx.state` for the handlers. */
export type RequestState = {
    requestId: string;
    /** Aborted when the client goes away or the server shuts down. */
    signal: AbortSignal;
    /** Name of the API key that authenticated the request, when keys are on. */
    keyName?: string;
    /** Extra fields for the request's log line (model, user, tokens). */
    logFields: Record<string, unknown>;
};

/** The abort reason when the client closed the connection before the response was complete. */
export class ClientDisconnectedError extends Error {
    constructor() {
        super("The client closed the connection.");
        this.name = "ClientDisconnectedError";
    }
}
