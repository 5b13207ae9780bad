/** The abort reason when the client closed the connection before the response was complete. */
export class ClientDisconnectedError extends Error {
    constructor() {
        super("The client closed the connection.");
        this.name = "ClientDisconnectedError";
    }
}
