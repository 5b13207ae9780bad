import net from "node:net";
import { describe, expect, it } from "vitest";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
import { startTestServer } from "../support/startTestServer.js";
import { storiesModelPath } from "../support/testModels.js";

// A stop signal's close ended every connection between requests by destroying it (Node's closeIdleConnections, which
// server.close() calls), also one whose finished response was still in its buffer: a 22 MB non-streamed speech answer
// arrived 200 with its Content-Length and 8 MB of body (found by a user trial). Here: a 20 MB chat answer to a client
// that stops reading after the first bytes, then the server is closed, then the client reads on: every byte arrives.
describe("a large answer already written when the server closes", () => {
    it("reaches the client whole (the connection ends once its buffer is sent)", async () => {
        const big = "x".repeat(20 * 1024 * 1024);
        const server = await startTestServer({models: [{id: "big", task: "chat", path: storiesModelPath}],
            factories: {chat: async () => new FakeChatEngine("big", {pieces: [big]})}});
        const url = new URL(server.url);
        const socket = net.connect(Number(url.port), url.hostname);
        const body = JSON.stringify({model: "big", messages: [{role: "user", content: "hi"}]});
        socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
        const chunks: Buffer[] = [];
        // The first bytes, then no more reading: the rest waits in the server's buffers.
        await new Promise<void>((resolve) => socket.once("data", (chunk: Buffer) => {
            chunks.push(chunk);
            socket.pause();
            resolve();
        }));
        // The close begins with the answer written or about to be (the close's sweep of connections between requests
        // finds it either way).
        const stopping = server.stop();
        const ended = new Promise<void>((resolve) => socket.once("close", () => resolve()));
        socket.on("data", (chunk: Buffer) => chunks.push(chunk));
        socket.resume();
        await ended;
        await stopping;
        const raw = Buffer.concat(chunks);
        const headerEnd = raw.indexOf("\r\n\r\n");
        const length = Number(/content-length: (\d+)/i.exec(raw.subarray(0, headerEnd).toString())![1]);
        expect(raw.length - headerEnd - 4).toBe(length);
        expect(length).toBeGreaterThan(big.length);
    }, 60_000);
});
