import type http from "node:http";
import type { Socket } from "node:net";

/**
 * Makes the server close a connection between its requests gracefully: what it still has to send goes out first, then
 * it ends. Node's `closeIdleConnections` (which `server.close()` calls too) destroys every connection whose last
 * response has ended, even one whose large response is still in its buffer: a stop signal cut such a download short
 * (22 MB of WAV answered 200 with its Content-Length, 8 MB delivered, found by a user trial). A connection with a
 * request in progress is left alone; the shutdown's timeout still cuts whatever is open then (`closeAllConnections`).
 */
export function closeIdleGracefully(server: http.Server): void {
    /** Per connection: its requests in progress, and the bytes it had read when the last one ended. */
    const connections = new Map<Socket, {running: number, readAtRest: number}>();
    server.on("connection", (socket: Socket) => {
        connections.set(socket, {running: 0, readAtRest: 0});
        socket.once("close", () => connections.delete(socket));
    });
    server.on("request", (request: http.IncomingMessage, response: http.ServerResponse) => {
        const socket = request.socket;
        const connection = connections.get(socket);
        if (connection == null || socket.destroyed)
            return;
        connection.running++;
        let done = false;
        const finished = () => {
            if (done)
                return;
            done = true;
            connection.running = Math.max(0, connection.running - 1);
            connection.readAtRest = socket.bytesRead;
        };
        response.once("finish", finished);
        response.once("close", finished);
        // Answered before its body was read (a 401, a 413), the request's body is read and dropped after: at rest once it is.
        const bodyRead = () => {
            if (done)
                connection.readAtRest = socket.bytesRead;
        };
        request.once("end", bodyRead);
        request.once("close", bodyRead);
    });
    server.closeIdleConnections = () => {
        // Idle: no request in progress, and none arriving (no byte read since the last one ended: its headers may be
        // half there, as Node's own version leaves such a connection alone).
        for (const [socket, {running, readAtRest}] of connections)
            if (running === 0 && socket.bytesRead === readAtRest && !socket.writableEnded)
                socket.end();
    };
}

/**
 * The server's request handler, but for a keep-alive request that came after its connection was ended (by the close's
 * sweep above): that connection cannot answer it, so it is destroyed and the request never reaches the app.
 */
export function servedUnlessEnded(handler: http.RequestListener): http.RequestListener {
    return (request, response) => {
        if (request.socket.writableEnded) {
            request.socket.destroy();
            return;
        }
        return handler(request, response);
    };
}
