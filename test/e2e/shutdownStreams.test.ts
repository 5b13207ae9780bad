import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ServerShutdownError } from "../../src/core/http/ServerShutdownError.js";
import { eventually } from "../support/eventually.js";
import { npmRunGatedServer } from "../support/npmRunGatedServer.js";
import { gatedTranscript } from "../support/gatedFakeEngines.js";

// When the shutdown's grace (SHUTDOWN_TIMEOUT_MS) ends, every stream still open ends with its format's terminal
// error before the connection closes, so a client can tell it from a network fault. The server runs as `npm start`
// runs it (`npm run test:gated-server`: the same `exec node` script) with gated fake engines
// (test/support/gatedFakeEngines.ts): each stream sends its first piece, then waits for a gate this test never
// opens, so every stream is still open when the grace ends, whatever the machine's speed.
const graceMs = 200;
const message = new ServerShutdownError(graceMs).message;
const openAiError = {error: {message, type: "service_unavailable_error", param: null, code: "server_shutting_down"}};
const sse = (data: unknown, event?: string) => `${event != null ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`;

let dir: string;
beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "los-test-shutdown-"));
    const manifest = path.join(dir, "models.json");
    // The paths are never read: the gated fakes replace the models.
    fs.writeFileSync(manifest, JSON.stringify({models: [
        {id: "chat", task: "chat", path: manifest},
        {id: "speech", task: "speech", path: manifest},
        {id: "images", task: "image", path: manifest},
        {id: "whisper", task: "transcription", path: manifest}
    ]}));
});
afterAll(() => fs.rmSync(dir, {recursive: true, force: true}));

/** A response body read as it arrives: `until` waits for text in it, `end` for the end (or the error that cut it). */
function reading(response: Response) {
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let raw = "";
    let bytes = 0;
    const waiters: (() => void)[] = [];
    const ended = (async () => {
        try {
            for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
                bytes += chunk.value.length;
                raw += decoder.decode(chunk.value, {stream: true});
                waiters.splice(0).forEach((wake) => wake());
            }
            return {raw, bytes, error: null};
        } catch (error) {
            return {raw, bytes, error: error as Error};
        } finally {
            waiters.splice(0).forEach((wake) => wake());
        }
    })();
    let over = false;
    void ended.then(() => over = true);
    const until = async (test: (raw: string, bytes: number) => boolean) => {
        while (!test(raw, bytes)) {
            if (over)
                throw new Error(`The stream ended before the expected piece: ${raw}`);
            await new Promise<void>((resolve) => waiters.push(resolve));
        }
    };
    return {until, ended};
}

/** An official client's stream: its first item now, the rest (and how it ended) later. */
async function iterating<T>(stream: AsyncIterable<T>) {
    const iterator = stream[Symbol.asyncIterator]();
    const items: T[] = [(await iterator.next()).value as T];
    const ended = (async () => {
        try {
            for (let next = await iterator.next(); !next.done; next = await iterator.next())
                items.push(next.value);
            return {items, error: null};
        } catch (error) {
            return {items, error: error as Error};
        }
    })();
    return {first: items[0], ended};
}

describe("a stream cut by the shutdown's grace ends with its format's terminal error", () => {
    for (const how of ["SIGTERM to npm", "SIGINT to the process group (Ctrl-C)"] as const) {
        it(`${how}: chat, completions, Responses, Messages, speech, images and transcription streams, raw and through the official clients`, async () => {
            const {npm, url, exited, output, killGroup} = await npmRunGatedServer(path.join(dir, "models.json"), {GATED_FAKE_ENGINES: "1", SHUTDOWN_TIMEOUT_MS: String(graceMs)});
            try {
                const post = (route: string, body: unknown) => fetch(`${url}/v1${route}`, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
                const openai = new OpenAI({baseURL: `${url}/v1`, apiKey: "none", maxRetries: 0});
                const anthropic = new Anthropic({baseURL: url, apiKey: "none", maxRetries: 0});
                const upload = () => toFile(new Uint8Array(2000).fill(7), "audio.wav");
                const form = async () => {
                    const body = new FormData();
                    body.append("file", new Blob([new Uint8Array(2000).fill(7)]), "audio.wav");
                    body.append("model", "whisper");
                    body.append("stream", "true");
                    return body;
                };
                const messages = [{role: "user" as const, content: "hi"}];

                // Raw: every stream is read until its first piece is in.
                const chat = reading(await post("/chat/completions", {model: "chat", messages, stream: true}));
                const completion = reading(await post("/completions", {model: "chat", prompt: "hi", stream: true}));
                const responses = reading(await post("/responses", {model: "chat", input: "hi", stream: true}));
                const anthropicRaw = reading(await post("/messages", {model: "chat", max_tokens: 20, messages, stream: true}));
                const speechSse = reading(await post("/audio/speech", {model: "speech", input: "One. Two.", voice: "alloy", response_format: "pcm", stream_format: "sse"}));
                const speechAudio = reading(await post("/audio/speech", {model: "speech", input: "One. Two.", voice: "alloy", response_format: "pcm"}));
                const image = reading(await post("/images/generations", {model: "images", prompt: "a cat", size: "64x64", stream: true}));
                const transcript = reading(await fetch(`${url}/v1/audio/transcriptions`, {method: "POST", body: await form()}));
                await chat.until((raw) => raw.includes('"content":"Hel"'));
                await completion.until((raw) => raw.includes('"text":"Hel"'));
                await responses.until((raw) => raw.includes("response.output_text.delta"));
                await anthropicRaw.until((raw) => raw.includes("text_delta"));
                await speechSse.until((raw) => raw.includes("speech.audio.delta"));
                // The first sentence ("One.", 0.14 s at 24 kHz, 16-bit): 6,720 bytes.
                await speechAudio.until((_raw, bytes) => bytes === 6720);
                await image.until((raw) => raw.includes("image_generation.progress"));
                await transcript.until((raw) => raw.includes("transcript.text.delta"));

                // The official clients, each at its first item.
                const clientChat = await iterating(await openai.chat.completions.create({model: "chat", messages, stream: true}));
                const clientCompletion = await iterating(await openai.completions.create({model: "chat", prompt: "hi", stream: true}));
                const clientResponses = await iterating(await openai.responses.create({model: "chat", input: "hi", stream: true}));
                const clientMessages = await iterating(await anthropic.messages.create({model: "chat", max_tokens: 20, messages, stream: true}));
                const clientImage = await iterating(await openai.images.generate({model: "images", prompt: "a cat", size: "256x256", stream: true}));
                const clientTranscript = await iterating(await openai.audio.transcriptions.create({model: "whisper", file: await upload(), stream: true}));
                // And a request that has not answered yet (not streamed): every chat job is in the engine first.
                const plain = post("/chat/completions", {model: "chat", messages});
                const busy = async (model: string) => (await (await fetch(`${url}/health`)).json() as {models: Record<string, {busy: number}>}).models[model].busy;
                expect(await eventually(async () => await busy("chat") === 9)).toBe(true);

                if (how === "SIGTERM to npm")
                    npm.kill("SIGTERM");
                else
                    process.kill(-npm.pid!, "SIGINT");

                // chat and completions: the error, then [DONE]; a clean end of the body (no network error).
                for (const stream of [chat, completion]) {
                    const {raw, error} = await stream.ended;
                    expect(error).toBeNull();
                    expect(raw.endsWith(sse(openAiError, "error") + "data: [DONE]\n\n"), raw).toBe(true);
                }
                // Responses: response.failed, the response of response.created with status failed and the error.
                const responsesRaw = (await responses.ended).raw;
                const created = JSON.parse(/event: response\.created\ndata: (.*)\n/.exec(responsesRaw)![1]);
                const sequence = [...responsesRaw.matchAll(/"sequence_number":(\d+)/g)].length - 1;
                expect(responsesRaw.endsWith(sse({
                    type: "response.failed", sequence_number: sequence,
                    response: {...created.response, status: "failed", error: {code: "server_error", message}}
                }, "response.failed")), responsesRaw).toBe(true);
                // Messages: Anthropic's error event.
                // Anthropic's error bodies carry the request's id (as the `request-id` header does).
                const messagesRaw = (await anthropicRaw.ended).raw;
                const requestId = /"request_id":"(req_[0-9a-f]+)"/.exec(messagesRaw)?.[1];
                expect(messagesRaw.endsWith(sse({type: "error", error: {type: "overloaded_error", message}, request_id: requestId}, "error")), messagesRaw).toBe(true);
                // Speech (SSE), images and transcription: OpenAI's error event, no [DONE] (their streams have none).
                for (const stream of [speechSse, image, transcript]) {
                    const {raw, error} = await stream.ended;
                    expect(error).toBeNull();
                    expect(raw.endsWith(sse(openAiError, "error")), raw).toBe(true);
                }
                // Raw chunked audio cannot carry an error: the body is cut before its last chunk, which fetch reports.
                const audio = await speechAudio.ended;
                expect(audio.bytes).toBe(6720);
                expect(audio.error).toBeInstanceOf(TypeError);
                // Not streamed: a 503 naming the shutdown.
                const answer = await plain;
                expect(answer.status).toBe(503);
                expect(await answer.json()).toEqual(openAiError);

                // The clients raise an API error (not a connection error) naming the shutdown; the Responses client sees response.failed.
                for (const stream of [clientChat, clientCompletion, clientImage, clientTranscript]) {
                    const {error} = await stream.ended;
                    expect(error).toBeInstanceOf(OpenAI.APIError);
                    expect(error).not.toBeInstanceOf(OpenAI.APIConnectionError);
                    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe("server_shutting_down");
                }
                expect((clientChat.first as OpenAI.ChatCompletionChunk).choices[0].delta.role).toBe("assistant");
                expect((clientTranscript.first as {delta: string}).delta).toBe(` ${gatedTranscript[0]}`);
                const {items: events, error: responsesError} = await clientResponses.ended;
                expect(responsesError).toBeNull();
                const failed = events.at(-1) as OpenAI.Responses.ResponseFailedEvent;
                expect(failed.type).toBe("response.failed");
                expect(failed.response).toMatchObject({status: "failed", error: {code: "server_error", message}});
                const {error: messagesError} = await clientMessages.ended;
                expect(messagesError).toBeInstanceOf(Anthropic.APIError);
                expect(messagesError).not.toBeInstanceOf(Anthropic.APIConnectionError);
                expect((messagesError as InstanceType<typeof Anthropic.APIError>).type).toBe("overloaded_error");

                expect(await exited).toBe(0);
                // Logged as shutdown aborts with the status that went out (200), not as failures.
                const aborted = output().split("\n").filter((line) => line.includes('aborted="shutdown"'));
                expect(aborted, output()).toHaveLength(14);
                expect(aborted.every((line) => line.includes(" INFO ") && line.includes("status=200")), output()).toBe(true);
                expect(output()).not.toMatch(/ ERROR |Stream failed|Unhandled/);
            } finally {
                killGroup();
            }
        }, 120_000);
    }
});
