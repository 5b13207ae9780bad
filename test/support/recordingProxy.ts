import http from "node:http";
import type { AddressInfo } from "node:net";

/** One request a client sent through the proxy, and the status and headers the server answered it with. */
export type RecordedExchange = {
    method: string;
    /** Path and query, as the client sent them (`/v1/messages?beta=true`). */
    url: string;
    headers: http.IncomingHttpHeaders;
    body: string;
    status: number;
    responseHeaders: http.IncomingHttpHeaders;
};

export type RecordingProxy = {url: string, exchanges: RecordedExchange[], close(): Promise<void>};

/**
 * A loopback HTTP proxy in front of `target` that records what a client program (an agent CLI we do not
 * control) sends and what it was answered, while passing both through unchanged (responses streamed as they
 * come, so SSE stays SSE).
 */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
    const exchanges: RecordedExchange[] = [];
    const upstream = new URL(target);
    const server = http.createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on("data", (chunk: Buffer) => chunks.push(chunk));
        request.on("end", () => {
            const body = Buffer.concat(chunks);
            const forwarded = http.request({
                host: upstream.hostname, port: upstream.port, method: request.method, path: request.url,
                headers: {...request.headers, host: upstream.host}
            }, (answer) => {
                exchanges.push({
                    method: request.method ?? "", url: request.url ?? "", headers: request.headers, body: body.toString("utf8"),
                    status: answer.statusCode ?? 0, responseHeaders: answer.headers
                });
                response.writeHead(answer.statusCode ?? 502, answer.headers);
                answer.pipe(response);
            });
            forwarded.on("error", (error) => response.destroy(error));
            response.on("close", () => forwarded.destroy());
            forwarded.end(body);
        });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        exchanges,
        close: () => new Promise((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
        })
    };
}

export type RefusingProxy = {url: string, attempts: string[], close(): Promise<void>};

/**
 * Where a client program's traffic to anything but loopback goes (its HTTPS_PROXY / HTTP_PROXY / ALL_PROXY, with
 * NO_PROXY naming loopback): refused, and each attempt kept (`CONNECT host:443`, `GET http://...`), so a test
 * can say that nothing tried to leave the machine.
 */
export async function startRefusingProxy(): Promise<RefusingProxy> {
    const attempts: string[] = [];
    const server = http.createServer((request, response) => {
        attempts.push(`${request.method} ${request.url}`);
        response.writeHead(403).end();
    });
    server.on("connect", (request, socket) => {
        attempts.push(`CONNECT ${request.url}`);
        socket.end("HTTP/1.1 403 Forbidden\r\n\r\n");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        attempts,
        close: () => new Promise((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
        })
    };
}
