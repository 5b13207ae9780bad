import type http from "node:http";

/**
 * Lets the client send its body now, if it waits to be asked (`Expect: 100-continue`): the server sends
 * `100 Continue` only here, once the route, the key, the request's origin and the server's room for bodies have
 * all been checked, so a refused request gets its 4xx/503 before its body is sent (startServer routes
 * `checkContinue` to the app instead of Node answering 100 for every request at once).
 */
export function continueBody(request: http.IncomingMessage, response: http.ServerResponse): void {
    if (/\b100-continue\b/i.test(request.headers.expect ?? "") && !response.headersSent && !response.writableEnded)
        response.writeContinue();
}
