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
    const requests = new Map<Socket, number>();
    server.on("connection", (socket: Socket) => {
        requests.set(socket, 0);
        socket.once("close", () => requests.delete(socket));
    });
    server.on("request", (request: http.IncomingMessage, response: http.ServerResponse) => {
        const socket = request.socket;
        requests.set(socket, (requests.get(socket) ?? 0) + 1);
        let done = false;
        const finished = () => {
            if (done)
                return;
            done = true;
            if (requests.has(socket))
                requests.set(socket, Math.max(0, requests.get(socket)! - 1));
        };
        response.once("finish", finished);
        response.once("close", finished);
    });
    server.closeIdleConnections = () => {
        for (const [socket, running] of requests)
            if (running === 0 && !socket.writableEnded)
                socket.end();
    };
}
