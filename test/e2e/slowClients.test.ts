import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { jsonOf, readSse, startTestServer, type TestServer } from "../support/startTestServer.js";
import { gatedFakeChatEngine } from "../support/gatedFakeChatEngine.js";
import { tinyChatModelPath } from "../support/testModels.js";

// Slow-loris: the server closes connections whose headers or body stall, by its own (short, test-set)
// timers; the assertions are about the outcome (the socket is closed by the server, a generation in
// progress is not), not about how long it took.
const models = [{id: "gated", task: "chat", path: tinyChatModelPath}];
let server: TestServer | undefined;
afterEach(async () => {
    await server?.stop();
    server = undefined;
});

/** Opens a raw connection, writes `text`, and resolves with everything the server sent once it closes the connection. */
function stall(url: string, text: string): Promise<string> {
    const {port} = new URL(url);
    return new Promise((resolve, reject) => {
        const socket = net.connect(Number(port), "127.0.0.1", () => socket.write(text));
        let received = "";
        socket.setEncoding("utf8");
        socket.on("data", (chunk) => received += chunk);
        socket.on("error", (error) => (error as NodeJS.ErrnoException).code === "ECONNRESET" ? undefined : reject(error));
        socket.on("close", () => resolve(received));
    });
}

describe("slow clients", () => {
    const start = async () => {
        const gated = gatedFakeChatEngine("gated");
        const engine = gated.engine;
        server = await startTestServer({models, config: {headersTimeoutMs: 200, bodyTimeoutMs: 200, keepAliveTimeoutMs: 200}, factories: {chat: async () => engine}});
        return gated;
    };

    it("closes a connection that sent half its headers and then nothing (408)", async () => {
        await start();
        const received = await stall(server!.url, "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty");
        expect(received === "" || received.startsWith("HTTP/1.1 408")).toBe(true);
    });

    it("closes a connection whose body stops arriving, without answering it", async () => {
        await start();
        const received = await stall(server!.url,
            "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"model\": \"gat");
        expect(received).not.toMatch(/^HTTP\/1\.1 2/);
        // The server is fine afterwards.
        expect((await fetch(`${server!.url}/health`)).status).toBe(200);
    });

    it("never cuts a generation that runs longer than those timeouts, streamed or not, even when it sends nothing", async () => {
        const engine = await start();
        const streamed = await server!.post("/v1/chat/completions", {model: "gated", messages: [{role: "user", content: "hi"}], stream: true});
        const plain = server!.post("/v1/chat/completions", {model: "gated", messages: [{role: "user", content: "hi"}]});
        await engine.started(2);
        // Both timers have provably fired for a stalled connection opened after the generations started.
        await stall(server!.url, "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 500\r\n\r\n{");
        await stall(server!.url, "GET /health HTTP/1.1\r\nHo");
        expect(engine.engine.load().busy).toBe(2);
        engine.release();
        const {events} = await readSse(streamed);
        expect(events.at(-1)!.data).toBe("[DONE]");
        expect((await jsonOf(await plain)).choices[0].message.content).toBe("first second");
    });
});
