import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "../support/eventually.js";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath } from "../support/testModels.js";

// A client that asks for a large response and never reads it: the server cuts the connection once
// bytes have waited unread for WRITE_TIMEOUT_MS (short here), freeing the buffers and the sequence.
// The responses are large by construction (far more than the socket buffers hold).
const models = [{id: "big", task: "chat", path: tinyChatModelPath}];
const piece = "x".repeat(256 * 1024);
let server: TestServer | undefined;
afterEach(async () => {
    await server?.stop();
    server = undefined;
});

/** Sends a request on a raw socket that never reads what comes back (the caller destroys it). */
function neverRead(url: string, body: unknown): net.Socket {
    const {port} = new URL(url);
    const text = JSON.stringify(body);
    const socket = net.connect(Number(port), "127.0.0.1", () => {
        socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
        socket.pause();
    });
    socket.on("error", () => {});
    return socket;
}

async function busyOf(url: string) {
    const health = await (await fetch(`${url}/health`)).json() as {models: Record<string, {busy: number}>};
    return health.models.big.busy;
}

describe("slow and absent readers", () => {
    for (const stream of [true, false]) {
        it(`a ${stream ? "streamed" : "whole"} response nobody reads is cut, and its sequence freed`, async () => {
            const engine = new FakeChatEngine("big", {pieces: Array.from({length: 200}, () => piece)});
            server = await startTestServer({models, config: {writeTimeoutMs: 300}, factories: {chat: async () => engine}});
            const reader = neverRead(server.url, {model: "big", messages: [{role: "user", content: "hi"}], stream});
            try {
                expect(await eventually(() => engine.jobs.length === 1)).toBe(true);
                // The server cuts the connection nobody reads (the reader itself never closes it), and frees the sequence.
                expect(await eventually(async () => await server!.openConnections() === 0, 1000)).toBe(true);
                expect(await busyOf(server.url)).toBe(0);
            } finally {
                reader.destroy();
            }
            // The server goes on serving.
            const response = await server.post("/v1/chat/completions", {model: "big", messages: [{role: "user", content: "hi"}], max_tokens: 1});
            expect(response.status).toBe(200);
        });
    }

    it("never cuts a response that is being read, however slowly it is produced", async () => {
        server = await startTestServer({models, config: {writeTimeoutMs: 100}, factories: {chat: async () => new FakeChatEngine("big", {
            pieces: ["a", "b", "c"],
            // Each piece comes after several write-timeout periods of silence.
            beforePiece: () => new Promise((resolve) => setTimeout(resolve, 400))
        })}});
        const response = await server.post("/v1/chat/completions", {model: "big", messages: [{role: "user", content: "hi"}], stream: true});
        expect(await response.text()).toContain("[DONE]");
    });
});
