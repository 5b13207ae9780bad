import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChatEngine, ChatEngineInfo, ChatJob, ChatRun, ChatRunHooks } from "../../src/capabilities/chat/ChatEngine.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath } from "../support/testModels.js";

const pieceBytes = 256 * 1024;
const pieces = 400;

/** Streams 100 MiB of text as fast as the event loop allows, and says when it was stopped. */
class FloodEngine implements ChatEngine {
    readonly info: ChatEngineInfo = {id: "flood", contextSize: 1_000_000, vocabularySize: 100, fingerprint: "fp_flood"};
    emitted = 0;
    readonly stopped: Promise<"aborted" | "finished">;
    private settle!: (how: "aborted" | "finished") => void;

    constructor() {
        this.stopped = new Promise((resolve) => this.settle = resolve);
    }

    load() {
        return {parallel: 1, busy: 0, waiting: 0};
    }

    async countPromptTokens(): Promise<number> {
        return 1;
    }

    countTextTokens(): number {
        return 1;
    }

    async tokenize() {
        return {tokens: [1]};
    }

    async decide(): Promise<never> {
        throw new Error("not used");
    }

    async detokenize() {
        return "x";
    }

    async submit(_job: ChatJob, hooks: ChatRunHooks): Promise<ChatRun> {
        const piece = "x".repeat(pieceBytes);
        const done = (async () => {
            for (let index = 0; index < pieces; index++) {
                // Lets the socket's close event through between pieces, as a real token loop does.
                await new Promise((resolve) => setImmediate(resolve));
                if (hooks.signal.aborted) {
                    this.settle("aborted");
                    throw hooks.signal.reason;
                }
                hooks.onText?.(0, piece);
                this.emitted++;
            }
            this.settle("finished");
            hooks.onFinish?.({index: 0, text: "", finishReason: "stop", completionTokens: pieces});
            return [{index: 0, text: "", finishReason: "stop" as const, completionTokens: pieces}];
        })();
        done.catch(() => {});
        return {promptTokens: 1, done};
    }

    async dispose() {}
}

describe("a streaming client that stops reading", () => {
    let server: TestServer;
    const engine = new FloodEngine();
    beforeAll(async () => {
        server = await startTestServer({
            models: [{id: "flood", task: "chat", path: tinyChatModelPath}],
            factories: {chat: async () => engine}
        });
    });
    afterAll(() => server.stop());

    it("cannot make the server buffer without bound: the stream is cut and the generation stopped", async () => {
        const {port} = new URL(server.url);
        const socket = net.connect(Number(port), "127.0.0.1");
        await new Promise<void>((resolve) => socket.once("connect", resolve));
        // Never read a byte of the answer.
        socket.pause();
        const body = JSON.stringify({model: "flood", messages: [{role: "user", content: "go"}], stream: true});
        socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
        expect(await engine.stopped).toBe("aborted");
        // 100 MiB were on offer; what went out is the writer's bound plus what the kernel's socket buffers took.
        expect(engine.emitted * pieceBytes).toBeLessThan(64 * 1024 * 1024);
        socket.destroy();
        const health = await fetch(`${server.url}/health`);
        expect(health.status).toBe(200);
    });
});
