import { afterEach, describe, expect, it } from "vitest";
import type { Config } from "../../src/config.js";
import { eventually } from "../support/eventually.js";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
import { FakeTranscriptionEngine } from "../support/FakeTranscriptionEngine.js";
import { RawConnection, type RawAnswer } from "../support/rawConnection.js";
import { startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyChatModelPath, tinyWhisperPath } from "../support/testModels.js";

// --max-body-memory: the bytes request bodies hold while they arrive, server-wide. Stalled uploads are held open by
// the test itself (a raw socket that sends part of a body and then nothing), so every state below is reached by the
// test's own writes; the server's count is read from /metrics. A cap of 100 KB: one 50 KB stalled body leaves room
// for small requests, not for another 60 KB one.
const cap = 100 * 1024;
let server: TestServer | undefined;
let chat: FakeChatEngine;
let whisper: FakeTranscriptionEngine;
let logLines: string[];
const open: RawConnection[] = [];
afterEach(async () => {
    for (const connection of open.splice(0))
        connection.destroy();
    await server?.stop();
    server = undefined;
});

async function start(config: Partial<Config> = {}) {
    chat = new FakeChatEngine("fake", {pieces: ["ok"]});
    whisper = new FakeTranscriptionEngine("whisper");
    logLines = [];
    server = await startTestServer({
        models: [{id: "fake", task: "chat", path: tinyChatModelPath}, {id: "whisper", task: "transcription", path: tinyWhisperPath}],
        config: {maxBodyMemory: cap, logLevel: "info", ...config}, logLines,
        factories: {chat: async () => chat, transcription: async () => whisper}
    });
    return server;
}

/** The bytes the server says request bodies hold now. */
async function held(): Promise<number> {
    const text = await (await fetch(`${server!.url}/metrics`)).text();
    return Number(/^los_request_body_memory_bytes (\d+)$/m.exec(text)?.[1]);
}

/** A chat request of exactly `size` bytes. */
function chatBodyOf(size: number): string {
    const [head, tail] = ['{"model":"fake","messages":[{"role":"user","content":"', '"}]}'];
    return head + "x".repeat(size - head.length - tail.length) + tail;
}

const boundary = "----upload";
const uploadHead = [`--${boundary}`, 'Content-Disposition: form-data; name="model"', "", "whisper",
    `--${boundary}`, 'Content-Disposition: form-data; name="file"; filename="a.wav"', "Content-Type: audio/wav", "", ""].join("\r\n");
const uploadTail = `\r\n--${boundary}--\r\n`;
/** A transcription upload of exactly `size` bytes, its file part last. */
function uploadOf(size: number): string {
    return uploadHead + "a".repeat(size - uploadHead.length - uploadTail.length) + uploadTail;
}

/** Opens a request of `body.length` declared bytes and sends its first `sent` bytes (all when omitted). */
async function send(path: string, contentType: string, body: string, sent = body.length) {
    const connection = await RawConnection.request(`${server!.url}${path}`, "POST", {"Content-Type": contentType, "Content-Length": body.length}, body.slice(0, sent));
    open.push(connection);
    return connection;
}
const sendChat = (body: string, sent?: number) => send("/v1/chat/completions", "application/json", body, sent);
const sendUpload = (body: string, sent?: number) => send("/v1/audio/transcriptions", `multipart/form-data; boundary=${boundary}`, body, sent);

function expectFull(answer: RawAnswer, label: string) {
    expect(answer.status, label).toBe(503);
    expect(answer.headers["retry-after"], label).toBe("2");
    const {error} = JSON.parse(answer.body);
    expect(error, label).toMatchObject({type: "service_unavailable_error", code: "server_overloaded"});
    expect(error.message, label).toContain("--max-body-memory");
}

describe("--max-body-memory", () => {
    it("refuses new bodies that do not fit beside a stalled one with 503 + Retry-After before reading them, and serves them once it is done", async () => {
        await start();
        const stalledBody = chatBodyOf(60_000);
        const stalled = await sendChat(stalledBody, 50_000);
        expect(await eventually(async () => await held() === 50_000)).toBe(true);

        // Only the heads are sent: each answer comes without a byte of its body.
        expectFull(await (await sendChat(chatBodyOf(60_000), 0)).answer(), "JSON");
        expectFull(await (await sendUpload(uploadOf(60_000), 0)).answer(), "upload");
        // A small request fits beside it.
        expect((await (await sendChat(chatBodyOf(1000))).answer()).status).toBe(200);
        expect(await held()).toBe(50_000);

        // The stalled client finishes: served, and its bytes released.
        await stalled.write(stalledBody.slice(50_000));
        expect((await stalled.answer()).status).toBe(200);
        expect(await eventually(async () => await held() === 0)).toBe(true);
        expect((await (await sendChat(chatBodyOf(60_000))).answer()).status).toBe(200);
        expect((await (await sendUpload(uploadOf(60_000))).answer()).status).toBe(200);
        expect(chat.jobs).toHaveLength(3);
        expect(whisper.jobs.map((job) => job.file.reduce((sum, part) => sum + part.length, 0))).toEqual([60_000 - uploadHead.length - uploadTail.length]);
        expect(logLines.filter((line) => /POST \/v1\/(chat\/completions|audio\/transcriptions) .*status=503 /.test(line))).toHaveLength(2);
    });

    it("a chunked body (JSON or upload) that outgrows the room while it arrives is refused at the chunk that does not fit", async () => {
        await start();
        await sendChat(chatBodyOf(60_000), 50_000);
        expect(await eventually(async () => await held() === 50_000)).toBe(true);
        for (const [path, contentType, body] of [
            ["/v1/chat/completions", "application/json", chatBodyOf(60_000)],
            ["/v1/audio/transcriptions", `multipart/form-data; boundary=${boundary}`, uploadOf(60_000)]
        ]) {
            const chunked = await RawConnection.request(`${server!.url}${path}`, "POST", {"Content-Type": contentType, "Transfer-Encoding": "chunked"});
            open.push(chunked);
            for (let at = 0; at < body.length; at += 10_000)
                await chunked.write(`${(Math.min(10_000, body.length - at)).toString(16)}\r\n${body.slice(at, at + 10_000)}\r\n`);
            await chunked.write("0\r\n\r\n");
            expectFull(await chunked.answer(), path);
            // Its bytes are released with its answer; the stalled body's stay counted.
            expect(await eventually(async () => await held() === 50_000)).toBe(true);
        }
        expect(chat.jobs).toHaveLength(0);
        expect(whisper.jobs).toHaveLength(0);
    });

    it("counts an upload's file bytes as they arrive and releases them when its client goes away", async () => {
        await start();
        const upload = uploadOf(60_000);
        const stalled = await sendUpload(upload, 50_000);
        const fileBytesSent = 50_000 - uploadHead.length;
        // The multipart parser may keep back the last bytes until it knows they are not a boundary.
        expect(await eventually(async () => await held() >= fileBytesSent - boundary.length - 8)).toBe(true);
        expect(await held()).toBeLessThanOrEqual(fileBytesSent);
        expectFull(await (await sendChat(chatBodyOf(60_000), 0)).answer(), "JSON beside a stalled upload");
        stalled.destroy();
        expect(await eventually(async () => await held() === 0)).toBe(true);
        expect((await (await sendChat(chatBodyOf(60_000))).answer()).status).toBe(200);
        expect(whisper.jobs).toHaveLength(0);
    });

    it("releases a stalled body's bytes when the body timeout cuts it", async () => {
        await start({bodyTimeoutMs: 200});
        const stalled = await sendChat(chatBodyOf(60_000), 50_000);
        // The server cuts the connection after 200 ms of silence; its line says what the body held until then.
        await stalled.closed();
        expect(await eventually(() => logLines.some((line) => /POST \/v1\/chat\/completions .*status=499 .*body_bytes=50000\b/.test(line)))).toBe(true);
        expect(await held()).toBe(0);
        expect((await (await sendChat(chatBodyOf(60_000))).answer()).status).toBe(200);
    });

    it("is reported in /metrics beside its limit", async () => {
        await start();
        const text = await (await fetch(`${server!.url}/metrics`)).text();
        expect(text).toMatch(/^los_request_body_memory_limit_bytes 102400$/m);
        expect(text).toMatch(/^los_request_body_memory_bytes 0$/m);
    });
});
