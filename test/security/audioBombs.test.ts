import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { concatBytes } from "../../src/media/audio/concatBytes.js";
import { createAudioEncoder } from "../../src/media/audio/createAudioEncoder.js";
import { flacSilence, uploadLimitBytes, wavAtRate } from "../support/audioBombs.js";
import { encodeFixture, remuxOggToWebm, testSignal } from "../support/audioFixtures.js";
import { eventually } from "../support/eventually.js";
import { jsonOf, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyWhisperPath } from "../support/testModels.js";

const vorbisFixture = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/audio/signal-3s-22k.ogg");

// Everything the servers of this file write to the temporary folder goes to a folder of its own, checked empty at the end.
const systemTmp = os.tmpdir();
const tmp = fs.mkdtempSync(path.join(systemTmp, "los-audio-bombs-"));
const savedTmpdir = process.env.TMPDIR;
process.env.TMPDIR = tmp;
// Client and server share this process's event loop: while the test encodes a fixture (seconds on a loaded machine),
// the server's 5 s keep-alive timer and the client's reuse of that connection race (ECONNRESET). Idle connections stay longer.
const keepAliveTimeoutMs = 60_000;

/** Uploads that decode to hours (issue 29): refused by their header or as soon as the decoded audio passes the limit, through HTTP. */
describe("audio uploads are bounded while they decode", () => {
    let server: TestServer;
    const limitSeconds = 2;
    /** Files longer than the limit, in every container (made before the server starts: encoding 600 s of FLAC takes seconds). */
    const tooLong: [string, Uint8Array][] = [];

    beforeAll(async () => {
        const signal = testSignal(4, 24_000);
        const ogg = await encodeFixture("opus", signal, 24_000);
        const streamedFlac = await createAudioEncoder("flac", {inputSampleRate: 24_000, streaming: true});
        tooLong.push(
            ["a.wav", await encodeFixture("wav", signal, 24_000)],
            ["a.flac", await encodeFixture("flac", signal, 24_000)],
            // STREAMINFO's length left "unknown", as a stream's: refused while decoding.
            ["streamed.flac", concatBytes([await streamedFlac.push(signal), await streamedFlac.end()])],
            // No Xing header: refused while decoding.
            ["a.mp3", await encodeFixture("mp3", signal, 24_000)],
            ["a.ogg", ogg],
            ["vorbis.ogg", fs.readFileSync(vorbisFixture)],
            ["a.webm", await remuxOggToWebm(ogg)],
            // MediaRecorder's WebM has no Duration: refused while decoding.
            ["recorded.webm", await remuxOggToWebm(ogg, {appendOnly: true})],
            // 600 s of FLAC silence (28 KB) repeated to the 25 MB upload limit: 147 hours.
            ["bomb.flac", await flacSilence(600, {scaleTo: uploadLimitBytes})],
            ["hidden-bomb.flac", await flacSilence(600, {scaleTo: uploadLimitBytes, total: "unknown"})]
        );
        server = await startTestServer({
            config: {workers: 1, onnxThreads: 1, maxAudioSeconds: limitSeconds, keepAliveTimeoutMs},
            models: [{id: "tiny-whisper", task: "transcription", path: tinyWhisperPath, aliases: ["whisper-1"]}]
        });
    }, 180_000);
    afterAll(() => server.stop());

    const transcribe = async (bytes: Uint8Array, name: string) =>
        server.client.audio.transcriptions.create({file: await toFile(bytes, name), model: "whisper-1"});

    it("a WAV whose header says 1 Hz (1,044 bytes claiming 1,000 s) is a 400 naming the rate, as is one at 500 kHz", async () => {
        const oneHertz = wavAtRate(1);
        expect(oneHertz.length).toBe(1_044);
        for (const [bytes, rate] of [[oneHertz, 1], [wavAtRate(500_000), 500_000]] as const) {
            const refusal = transcribe(bytes, "bomb.wav");
            await expect(refusal).rejects.toMatchObject({status: 400, param: "file", code: "unsupported_sample_rate", type: "invalid_request_error"});
            await expect(refusal).rejects.toThrow(`sample rate of ${rate} Hz is outside the 8000-384000 Hz accepted`);
        }
        expect((await transcribe(wavAtRate(8_000, 8_000), "ok.wav")).usage).toEqual({type: "duration", seconds: 1});
    });

    it("audio longer than --max-audio-seconds is a 400 naming the limit, in every container, declared by its header or not", async () => {
        for (const [name, bytes] of tooLong) {
            const refusal = transcribe(bytes, name);
            await expect(refusal, name).rejects.toMatchObject({status: 400, param: "file", code: "audio_too_long"});
            await expect(refusal, name).rejects.toThrow(`longer than the limit of ${limitSeconds} s`);
        }
        // What fits the limit is transcribed.
        expect((await transcribe(await encodeFixture("wav", testSignal(1.5, 16_000), 16_000), "short.wav")).usage).toEqual({type: "duration", seconds: 2});
        expect((await jsonOf(await fetch(`${server.url}/health`))).models["tiny-whisper"]).toMatchObject({busy: 0, waiting: 0});
    }, 120_000);

    it("a FLAC whose frames hold more than its header declares is a 400 naming the file", async () => {
        // 1 s of silence (as its STREAMINFO says) repeated to 20 s.
        const refusal = transcribe(await flacSilence(1, {scaleTo: 20 * 560, total: "original"}), "lying.flac");
        await expect(refusal).rejects.toMatchObject({status: 400, param: "file", code: "invalid_file_format"});
        await expect(refusal).rejects.toThrow("more audio than its header declares");
    });
});

describe("a client that leaves while its upload decodes", () => {
    let server: TestServer;

    beforeAll(async () => {
        server = await startTestServer({
            config: {workers: 1, onnxThreads: 1, maxAudioSeconds: 3600, keepAliveTimeoutMs},
            models: [{id: "tiny-whisper", task: "transcription", path: tinyWhisperPath}]
        });
    });
    afterAll(() => server.stop());

    it("frees the worker at once: decoding stops at its next piece, the next request runs", async () => {
        // 10 s of 384 kHz FLAC silence repeated to 2.6 MB (about 2,000 s, within the limit, its STREAMINFO saying so): tens
        // of seconds of decoding and resampling if nothing stopped it, each piece a few milliseconds.
        const bomb = await flacSilence(10, {rate: 384_000, scaleTo: 2_600_000, total: "true"});
        const health = async () => (await jsonOf(await fetch(`${server.url}/health`))).models["tiny-whisper"] as {busy: number, waiting: number};
        const body = new FormData();
        body.append("model", "tiny-whisper");
        body.append("file", new Blob([bomb]), "bomb.flac");
        const client = new AbortController();
        const request = fetch(`${server.url}/v1/audio/transcriptions`, {method: "POST", body, signal: client.signal}).catch((error: Error) => error);
        // The request holds the model's one place (its decode task runs on the pool's one worker), then its client leaves.
        expect(await eventually(async () => (await health()).busy === 1)).toBe(true);
        client.abort();
        expect(await request).toMatchObject({name: "AbortError"});
        expect(await eventually(async () => (await health()).busy === 0)).toBe(true);
        expect(await health()).toEqual({...await health(), busy: 0, waiting: 0});
        const next = await server.client.audio.transcriptions.create({file: await toFile(await encodeFixture("wav", testSignal(1, 16_000), 16_000), "a.wav"), model: "tiny-whisper"});
        expect(next.usage).toEqual({type: "duration", seconds: 1});
    });
});

afterAll(() => {
    // Servers are stopped (their own afterAll hooks ran first): nothing is left behind in the temporary folder.
    if (savedTmpdir === undefined)
        delete process.env.TMPDIR;
    else
        process.env.TMPDIR = savedTmpdir;
    // (The test runner's bundler, rolldown, keeps a session file there: not the server's.)
    const left = fs.readdirSync(tmp).filter((name) => name !== ".ses");
    fs.rmSync(tmp, {recursive: true, force: true});
    expect(left).toEqual([]);
});
