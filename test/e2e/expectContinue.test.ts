import { afterEach, describe, expect, it } from "vitest";
import type { Config } from "../../src/config.js";
import { chatBody, startChatAndWhisperServer, uploadBody, uploadBoundary } from "../support/chatAndWhisperServer.js";
import type { FakeChatEngine } from "../support/FakeChatEngine.js";
import type { FakeTranscriptionEngine } from "../support/FakeTranscriptionEngine.js";
import { RawConnection } from "../support/rawConnection.js";
import type { TestServer } from "../support/startTestServer.js";

// `Expect: 100-continue` (curl sends it for bodies over 1 MB): the server invites the body only once the request has
// passed every check that comes before it, so a refused client never sends its upload (before, Node answered
// `100 Continue` at once, and the 401/403/413 came after the whole body).
let server: TestServer | undefined;
let chat: FakeChatEngine;
let whisper: FakeTranscriptionEngine;
afterEach(async () => {
    await server?.stop();
    server = undefined;
});

async function start(apiKey?: string, config: Partial<Config> = {}) {
    ({server, chat, whisper} = await startChatAndWhisperServer({apiKey, config: {...apiKey == null ? {} : {apiKeys: [apiKey]}, ...config}}));
    return server;
}

const chatHead = (length: number) => ({"Content-Type": "application/json", "Content-Length": length, Expect: "100-continue"});
const uploadHead = (length: number) => ({"Content-Type": `multipart/form-data; boundary=${uploadBoundary}`, "Content-Length": length, Expect: "100-continue"});

/** Sends only the head, then checks that the first thing the server sends is the final answer `status`, not an invitation. */
async function expectAnsweredBeforeBody(path: string, headers: Record<string, string | number>, status: number) {
    const connection = await RawConnection.request(`${server!.url}${path}`, "POST", headers);
    try {
        expect(await connection.firstStatus(), `${path} ${JSON.stringify(headers)}`).toBe(status);
        const answer = await connection.answer();
        expect(answer.status).toBe(status);
        return JSON.parse(answer.body) as {error: {code?: string, type?: string}};
    } finally {
        connection.destroy();
    }
}

describe("Expect: 100-continue", () => {
    it("invites the body of an accepted request, then answers it", async () => {
        await start("sk-right");
        for (const [path, head, body] of [
            ["/v1/chat/completions", chatHead(Buffer.byteLength(chatBody)), chatBody],
            ["/v1/audio/transcriptions", uploadHead(Buffer.byteLength(uploadBody)), uploadBody]
        ] as const) {
            const connection = await RawConnection.request(`${server!.url}${path}`, "POST", {...head, Authorization: "Bearer sk-right"});
            expect(await connection.firstStatus(), path).toBe(100);
            connection.skipReceived();
            await connection.write(body);
            expect((await connection.answer()).status, path).toBe(200);
            connection.destroy();
        }
        expect(chat.jobs).toHaveLength(1);
        expect(whisper.jobs).toHaveLength(1);
    });

    it("answers a request without a valid key, from another site, or too large before inviting its body", async () => {
        await start("sk-right");
        for (const path of ["/v1/chat/completions", "/v1/audio/transcriptions"]) {
            const head = path.includes("audio") ? uploadHead(20 * 1024 * 1024) : chatHead(5 * 1024 * 1024);
            expect((await expectAnsweredBeforeBody(path, head, 401)).error.code).toBe("invalid_api_key");
            expect((await expectAnsweredBeforeBody(path, {...head, Authorization: "Bearer sk-right", Origin: "https://evil.example"}, 403)).error.code)
                .toBe("cross_site_request");
        }
        // Past the body limit (10 MB by default) and past the upload limit (25 MB): refused from the declared length.
        expect((await expectAnsweredBeforeBody("/v1/chat/completions", {...chatHead(11 * 1024 * 1024), Authorization: "Bearer sk-right"}, 413)).error.code)
            .toBe("request_too_large");
        expect((await expectAnsweredBeforeBody("/v1/audio/transcriptions", {...uploadHead(26 * 1024 * 1024), Authorization: "Bearer sk-right"}, 413)).error.code)
            .toBe("request_too_large");
        expect(chat.jobs).toHaveLength(0);
        expect(whisper.jobs).toHaveLength(0);
    });

    it("answers 503 before inviting a body the server has no room for (--max-body-memory)", async () => {
        await start(undefined, {maxBodyMemory: 1024 * 1024});
        const body = await expectAnsweredBeforeBody("/v1/chat/completions", chatHead(2 * 1024 * 1024), 503);
        expect(body.error.type).toBeDefined();
        expect(chat.jobs).toHaveLength(0);
    });
});
