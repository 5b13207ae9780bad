import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeFixture, remuxOggToWebm, testSignal } from "../support/audioFixtures.js";
import { jsonOf, readSse, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyVitsPath, tinyWhisperEnglishPath, tinyWhisperPath } from "../support/testModels.js";

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures");

type VerboseJson = {
    task: string; language: string; duration: number; text: string; usage: {type: string, seconds: number};
    segments: {id: number, seek: number, start: number, end: number, text: string, tokens: number[], temperature: number,
        avg_logprob: number, compression_ratio: number, no_speech_prob: number}[];
};

/** What every verbose_json must hold, whatever the random model says. */
function expectWellFormed(verbose: VerboseJson, seconds: number) {
    expect(verbose.duration).toBeCloseTo(seconds, 1);
    expect(verbose.usage).toEqual({type: "duration", seconds: Math.ceil(verbose.duration)});
    expect(verbose.segments.length).toBeGreaterThan(0);
    let previousEnd = 0;
    verbose.segments.forEach((segment, index) => {
        expect(segment.id).toBe(index);
        expect(segment.start).toBeGreaterThanOrEqual(previousEnd - 1e-9);
        expect(segment.end).toBeGreaterThanOrEqual(segment.start);
        expect(segment.end).toBeLessThanOrEqual(verbose.duration + 1e-9);
        expect(segment.seek / 100).toBeLessThanOrEqual(segment.start + 1e-9);
        expect(segment.avg_logprob).toBeLessThanOrEqual(0);
        expect(segment.no_speech_prob).toBeGreaterThanOrEqual(0);
        expect(segment.no_speech_prob).toBeLessThanOrEqual(1);
        expect(segment.tokens.length).toBeGreaterThan(0);
        expect(segment.text.trim()).not.toBe("");
        previousEnd = segment.end;
    });
    expect(verbose.text).toBe(verbose.segments.map((segment) => segment.text).join("").trim());
}

/** SubRip or WebVTT cues parsed back into start, end and text. */
function parseCues(body: string): {start: number, end: number, text: string}[] {
    const seconds = (code: string) => {
        const [h, m, s] = code.replace(",", ".").split(":");
        return Number(h) * 3600 + Number(m) * 60 + Number(s);
    };
    return [...body.matchAll(/(\d\d:\d\d:\d\d[.,]\d{3}) --> (\d\d:\d\d:\d\d[.,]\d{3})\n(.*)\n/gu)]
        .map(([, start, end, text]) => ({start: seconds(start), end: seconds(end), text}));
}

/**
 * /v1/audio/transcriptions and /v1/audio/translations on tiny random-weight Whisper-shaped models
 * (encoder + merged decoder ONNX through transformers.js in the worker pool). Random weights say
 * nothing meaningful: the tests hold the structure (formats agree with each other, times are
 * ordered and inside the file, the same audio gives the same text in every lossless container).
 */
describe("transcription on the tiny Whisper models", () => {
    let server: TestServer;
    const rate = 16_000;
    const signal = testSignal(4, rate);
    let wav: Uint8Array;

    beforeAll(async () => {
        server = await startTestServer({
            // Client and server share this process's event loop: while a test encodes a fixture (seconds on a loaded machine),
            // a 5 s keep-alive timer and the client's reuse of that connection race (ECONNRESET). Idle connections stay longer.
            config: {workers: 2, onnxThreads: 1, keepAliveTimeoutMs: 60_000},
            models: [
                {id: "tiny-whisper", task: "transcription", path: tinyWhisperPath, aliases: ["whisper-1"]},
                {id: "tiny-whisper-en", task: "transcription", path: tinyWhisperEnglishPath},
                {id: "tiny-vits", task: "speech", path: tinyVitsPath}
            ]
        });
        wav = await encodeFixture("wav", signal, rate);
    });
    afterAll(() => server.stop());

    const upload = (bytes: Uint8Array, name = "audio.wav") => toFile(bytes, name);

    it("answers every response_format through the official client, and they agree", async () => {
        const verbose = await server.client.audio.transcriptions.create({
            file: await upload(wav), model: "whisper-1", response_format: "verbose_json", timestamp_granularities: ["segment"]
        }) as unknown as VerboseJson;
        expect(verbose.task).toBe("transcribe");
        expect(verbose.language).toBe("english");
        expectWellFormed(verbose, 4);

        const json = await server.client.audio.transcriptions.create({file: await upload(wav), model: "whisper-1"});
        expect(json.text).toBe(verbose.text);
        expect(json.usage).toEqual({type: "duration", seconds: 4});

        const text = await server.client.audio.transcriptions.create({file: await upload(wav), model: "whisper-1", response_format: "text"});
        expect(text).toBe(`${verbose.text}\n`);

        const srt = await server.client.audio.transcriptions.create({file: await upload(wav), model: "whisper-1", response_format: "srt"});
        const srtCues = parseCues(srt as unknown as string);
        expect(srt as unknown as string).toMatch(/^1\n\d\d:\d\d:\d\d,\d{3} --> /u);
        expect(srtCues.map((cue) => cue.text)).toEqual(verbose.segments.map((segment) => segment.text.trim()));
        srtCues.forEach((cue, index) => {
            expect(cue.start).toBeCloseTo(verbose.segments[index].start, 3);
            expect(cue.end).toBeCloseTo(verbose.segments[index].end, 3);
        });

        const vtt = await server.client.audio.transcriptions.create({file: await upload(wav), model: "whisper-1", response_format: "vtt"});
        expect(vtt as unknown as string).toMatch(/^WEBVTT\n\n\d\d:\d\d:\d\d\.\d{3} --> /u);
        expect(parseCues(vtt as unknown as string)).toEqual(srtCues);
    });

    it("streams transcript.text.delta events and a transcript.text.done through the official client", async () => {
        const whole = await server.client.audio.transcriptions.create({file: await upload(wav), model: "whisper-1"});
        const stream = await server.client.audio.transcriptions.create({file: await upload(wav), model: "whisper-1", stream: true});
        let deltas = "";
        const done: unknown[] = [];
        for await (const event of stream) {
            if (event.type === "transcript.text.delta")
                deltas += event.delta;
            else if (event.type === "transcript.text.done")
                done.push(event);
        }
        expect(deltas.trim()).toBe(whole.text);
        expect(done).toEqual([{
            type: "transcript.text.done", text: whole.text,
            usage: {type: "tokens", input_tokens: 200, output_tokens: expect.any(Number), total_tokens: expect.any(Number), input_token_details: {audio_tokens: 200, text_tokens: 0}}
        }]);
    });

    it("reads wav, flac, mp3, ogg opus, ogg vorbis and webm opus (lossless ones give the very same text), at other rates and in stereo", async () => {
        const reference = await server.client.audio.transcriptions.create({file: await upload(wav), model: "whisper-1", response_format: "verbose_json"}) as unknown as VerboseJson;
        const flac = await server.client.audio.transcriptions.create({file: await upload(await encodeFixture("flac", signal, rate), "a.flac"), model: "whisper-1", response_format: "verbose_json"}) as unknown as VerboseJson;
        // The decoders scale 16-bit samples alike up to float rounding: the same tokens and times, scores to a few digits.
        expect(flac.text).toBe(reference.text);
        expect(flac.segments.map(({avg_logprob, no_speech_prob, ...rest}) => rest)).toEqual(reference.segments.map(({avg_logprob, no_speech_prob, ...rest}) => rest));
        flac.segments.forEach((segment, index) => expect(segment.avg_logprob).toBeCloseTo(reference.segments[index].avg_logprob, 3));
        for (const [format, name] of [["mp3", "a.mp3"], ["opus", "a.ogg"]] as const) {
            const bytes = await encodeFixture(format, testSignal(4, 24_000), 24_000);
            const verbose = await server.client.audio.transcriptions.create({file: await upload(bytes, name), model: "whisper-1", response_format: "verbose_json"}) as unknown as VerboseJson;
            // Lossy codecs add their padding (mp3's encoder delay and last frame, opus's pre-skip rounding).
            expect(verbose.duration).toBeGreaterThan(3.9);
            expect(verbose.duration).toBeLessThan(4.2);
        }
        // The server's own Ogg Opus moved into WebM (MediaRecorder's container).
        const webm = await remuxOggToWebm(await encodeFixture("opus", testSignal(4, 24_000), 24_000));
        expect([...webm.subarray(0, 4)]).toEqual([0x1A, 0x45, 0xDF, 0xA3]);
        const fromWebm = await server.client.audio.transcriptions.create({file: await upload(webm, "a.webm"), model: "whisper-1", response_format: "verbose_json"}) as unknown as VerboseJson;
        expect(fromWebm.duration).toBeGreaterThan(3.9);
        expect(fromWebm.duration).toBeLessThan(4.2);
        // Ogg Vorbis: a committed fixture (test/fixtures/README.md), 3 s at 22.05 kHz.
        const vorbis = fs.readFileSync(path.join(fixtures, "audio", "signal-3s-22k.ogg"));
        const fromVorbis = await server.client.audio.transcriptions.create({file: await upload(vorbis, "a.ogg"), model: "whisper-1", response_format: "verbose_json"}) as unknown as VerboseJson;
        expect(fromVorbis.duration).toBeCloseTo(3, 1);
        // 8 kHz stereo float WAV, hand-written: resampled and mixed to mono.
        const left = testSignal(2, 8_000, 1);
        const floatWav = new Uint8Array(44 + left.length * 8);
        const view = new DataView(floatWav.buffer);
        floatWav.set(new TextEncoder().encode("RIFF"), 0);
        view.setUint32(4, 36 + left.length * 8, true);
        floatWav.set(new TextEncoder().encode("WAVEfmt "), 8);
        view.setUint32(16, 16, true);
        view.setUint16(20, 3, true);
        view.setUint16(22, 2, true);
        view.setUint32(24, 8_000, true);
        view.setUint32(28, 8_000 * 8, true);
        view.setUint16(32, 8, true);
        view.setUint16(34, 32, true);
        floatWav.set(new TextEncoder().encode("data"), 36);
        view.setUint32(40, left.length * 8, true);
        left.forEach((value, index) => {
            view.setFloat32(44 + index * 8, value, true);
            view.setFloat32(48 + index * 8, -value, true);
        });
        const stereo = await server.client.audio.transcriptions.create({file: await upload(floatWav), model: "whisper-1", response_format: "verbose_json"}) as unknown as VerboseJson;
        expect(stereo.duration).toBeCloseTo(2, 2);
    });

    it("include logprobs (json and streamed) and word timestamps (verbose_json) through the official client", async () => {
        const plain = await server.client.audio.transcriptions.create({file: await upload(wav), model: "whisper-1"});
        const json = await server.client.audio.transcriptions.create({file: await upload(wav), model: "whisper-1", include: ["logprobs"]});
        expect(json.text).toBe(plain.text);
        expect(json.logprobs!.length).toBeGreaterThan(0);
        expect(json.logprobs!.map((entry) => entry.token).join("").trim()).toBe(json.text);
        expect(json.logprobs!.every((entry) => entry.logprob! <= 0 && Array.isArray(entry.bytes))).toBe(true);

        const stream = await server.client.audio.transcriptions.create({file: await upload(wav), model: "whisper-1", include: ["logprobs"], stream: true});
        const streamed: {token?: string}[] = [];
        let doneLogprobs: unknown[] = [];
        for await (const event of stream) {
            if (event.type === "transcript.text.delta")
                streamed.push(...event.logprobs!);
            else if (event.type === "transcript.text.done")
                doneLogprobs = event.logprobs!;
        }
        expect(streamed).toEqual(json.logprobs);
        expect(doneLogprobs).toEqual(json.logprobs);

        const words = await server.client.audio.transcriptions.create({
            file: await upload(wav), model: "whisper-1", response_format: "verbose_json", timestamp_granularities: ["word"]
        });
        expect(words.segments).toBeUndefined();
        // The words spell the text (the random model's segments do not start with a space, so words meet across segments).
        expect(words.words!.length).toBeGreaterThan(0);
        expect(words.words!.map((word) => word.word).join("")).toBe(words.text.replace(/\s+/gu, ""));
        words.words!.forEach((word, index) => {
            expect(word.end).toBeGreaterThanOrEqual(word.start);
            expect(word.end).toBeLessThanOrEqual(4);
            expect(word.start).toBeGreaterThanOrEqual(words.words![index - 1]?.start ?? 0);
        });
        const both = await server.client.audio.transcriptions.create({
            file: await upload(wav), model: "whisper-1", response_format: "verbose_json", timestamp_granularities: ["word", "segment"]
        }) as unknown as VerboseJson & {words: unknown[]};
        expect(both.words).toEqual(words.words);
        expectWellFormed(both, 4);
    });

    it("transcribes the server's own /v1/audio/speech output (round trip)", async () => {
        const speech = await server.post("/v1/audio/speech", {model: "tiny-vits", input: "Hello there. This is a round trip.", response_format: "wav", stream_format: "audio"});
        expect(speech.status).toBe(200);
        const bytes = new Uint8Array(await speech.arrayBuffer());
        // The streamed WAV says "length unknown" (0xFFFFFFFF): read to the end of the file.
        const samples = (bytes.length - 44) / 2;
        const verbose = await server.client.audio.transcriptions.create({file: await upload(bytes, "speech.wav"), model: "whisper-1", response_format: "verbose_json"}) as unknown as VerboseJson;
        expect(verbose.duration).toBeCloseTo(samples / 16_000, 2);
        expect(verbose.segments.every((segment) => segment.end <= verbose.duration)).toBe(true);
    });

    it("long audio goes in 30 s windows: segments past 30 s, later windows seek forward", async () => {
        const long = await encodeFixture("wav", testSignal(70, rate, 9), rate);
        const verbose = await server.client.audio.transcriptions.create({file: await upload(long), model: "whisper-1", response_format: "verbose_json"}) as unknown as VerboseJson;
        expectWellFormed(verbose, 70);
        const seeks = [...new Set(verbose.segments.map((segment) => segment.seek))];
        expect(seeks.length).toBeGreaterThanOrEqual(3);
        expect(seeks).toEqual([...seeks].sort((a, b) => a - b));
        expect(verbose.segments.at(-1)!.end).toBeGreaterThan(60);
    });

    it("translates (task translate) through the official client; an English-only model cannot", async () => {
        const translation = await server.client.audio.translations.create({file: await upload(wav), model: "whisper-1", response_format: "verbose_json"}) as unknown as VerboseJson;
        expect(translation.task).toBe("translate");
        expectWellFormed(translation, 4);
        const transcript = await server.client.audio.transcriptions.create({file: await upload(wav), model: "tiny-whisper-en", response_format: "verbose_json"}) as unknown as VerboseJson;
        expectWellFormed(transcript, 4);
        await expect(server.client.audio.translations.create({file: await upload(wav), model: "tiny-whisper-en"})).rejects.toMatchObject({status: 400, param: "model"});
    });

    it("language, prompt and temperature reach the model", async () => {
        const text = async (fields: Record<string, unknown>) =>
            (await server.client.audio.transcriptions.create({file: await upload(wav), model: "whisper-1", ...fields})).text;
        const plain = await text({});
        expect(await text({language: "en"})).toBe(plain);
        // Another language token or a prompt changes what the decoder is conditioned on.
        expect(await text({language: "de"}) !== plain || await text({prompt: "zebra quartz"}) !== plain).toBe(true);
        expect(await text({temperature: 0})).toBe(plain);
        const verbose = await server.client.audio.transcriptions.create({file: await upload(wav), model: "whisper-1", response_format: "verbose_json", temperature: 0.8}) as unknown as VerboseJson;
        expect(verbose.segments.every((segment) => segment.temperature === 0.8)).toBe(true);
    });

    it("refuses bad requests with a 400 naming the field", async () => {
        const form = (fields: Record<string, string>, file: {bytes: Uint8Array, name: string} | null = {bytes: wav, name: "a.wav"}, path = "/v1/audio/transcriptions") => {
            const body = new FormData();
            for (const [name, value] of Object.entries(fields))
                body.append(name, value);
            if (file != null)
                body.append("file", new Blob([file.bytes]), file.name);
            return fetch(`${server.url}${path}`, {method: "POST", body});
        };
        const expectError = async (response: Response, status: number, param: string | null) => {
            const body = await jsonOf(response);
            expect({status: response.status, param: body.error?.param}, JSON.stringify(body)).toEqual({status, param});
            return body.error.message as string;
        };
        expect(await expectError(await form({model: "whisper-1"}, {bytes: new TextEncoder().encode("not audio at all"), name: "a.wav"}), 400, "file")).toMatch(/decode/u);
        // Streamed: the refusal comes in the start phase, as a plain JSON 400, not an event.
        const streamedRefusal = await form({model: "whisper-1", stream: "true"}, {bytes: new TextEncoder().encode("not audio at all"), name: "a.wav"});
        expect(streamedRefusal.headers.get("content-type")).toMatch(/^application\/json/u);
        await expectError(streamedRefusal, 400, "file");
        const garbledWav = wav.slice(0, 44);
        garbledWav.set(new TextEncoder().encode("junk"), 36);
        await expectError(await form({model: "whisper-1"}, {bytes: garbledWav, name: "a.wav"}), 400, "file");
        const m4a = await encodeFixture("aac", signal, rate);
        await expectError(await form({model: "whisper-1"}, {bytes: m4a, name: "a.aac"}), 400, "file");
        await expectError(await form({model: "whisper-1"}, {bytes: new Uint8Array([0, 0, 0, 24, ...new TextEncoder().encode("ftypM4A ")]), name: "a.m4a"}), 400, "file");
        await expectError(await form({model: "whisper-1"}, null), 400, "file");
        // Two `file` parts: one file per request (it was a 413, "too large", for two small files).
        const twoFiles = new FormData();
        twoFiles.append("model", "whisper-1");
        twoFiles.append("file", new Blob([wav]), "a.wav");
        twoFiles.append("file", new Blob([wav]), "b.wav");
        expect(await expectError(await fetch(`${server.url}/v1/audio/transcriptions`, {method: "POST", body: twoFiles}), 400, "file"))
            .toBe("The request carries more than one file: upload one 'file' per request.");
        await expectError(await form({model: "whisper-1", file: "text"}, null), 400, "file");
        await expectError(await form({}), 400, "model");
        await expectError(await form({model: "nope"}), 404, "model");
        await expectError(await form({model: "whisper-1", response_format: "diarized_json"}), 400, "response_format");
        await expectError(await form({model: "whisper-1", temperature: "hot"}), 400, "temperature");
        await expectError(await form({model: "whisper-1", temperature: "1.5"}), 400, "temperature");
        await expectError(await form({model: "whisper-1", language: "english"}), 400, "language");
        await expectError(await form({model: "whisper-1", language: "ja"}), 400, "language");
        await expectError(await form({model: "tiny-whisper-en", language: "de"}), 400, "language");
        await expectError(await form({model: "whisper-1", stream: "yes"}), 400, "stream");
        // Word times need a decoder exported with its cross-attentions: the English-only test model has none.
        expect(await expectError(await form({model: "tiny-whisper-en", "timestamp_granularities[]": "word", response_format: "verbose_json"}), 400, "timestamp_granularities"))
            .toMatch(/cross-attentions/u);
        await expectError(await form({model: "whisper-1", "include[]": "logprobs", response_format: "verbose_json"}), 400, "include");
        await expectError(await form({model: "whisper-1", "timestamp_granularities[]": "segment"}), 400, "timestamp_granularities");
        await expectError(await form({model: "whisper-1", language: "en"}, undefined, "/v1/audio/translations"), 400, "language");
        await expectError(await form({model: "whisper-1", voice: "x"}), 400, "voice");
        await expectError(await server.post("/v1/audio/transcriptions", {model: "whisper-1"}), 415, null);
        // A chat model name is not a transcription model.
        const health = await jsonOf(await fetch(`${server.url}/health`));
        expect(health.models["tiny-whisper"]).toMatchObject({busy: 0, waiting: 0});
    });

    it("a client that goes away mid-stream stops the work between windows; the engine is free again", async () => {
        const long = await encodeFixture("wav", testSignal(120, rate, 11), rate);
        const body = new FormData();
        body.append("model", "whisper-1");
        body.append("stream", "true");
        body.append("file", new Blob([long]), "long.wav");
        const abort = new AbortController();
        const response = await fetch(`${server.url}/v1/audio/transcriptions`, {method: "POST", body, signal: abort.signal});
        expect(response.status).toBe(200);
        const reader = response.body!.getReader();
        const first = await reader.read();
        expect(new TextDecoder().decode(first.value)).toContain("transcript.text.delta");
        abort.abort();
        for (let attempt = 0; attempt < 2000; attempt++) {
            const health = await jsonOf(await fetch(`${server.url}/health`));
            if (health.models["tiny-whisper"].busy === 0)
                break;
            await new Promise((resolve) => setImmediate(resolve));
        }
        expect((await jsonOf(await fetch(`${server.url}/health`))).models["tiny-whisper"]).toMatchObject({busy: 0, waiting: 0});
        const after = await readSse(await fetch(`${server.url}/v1/audio/transcriptions`, {method: "POST", body: (() => {
            const again = new FormData();
            again.append("model", "whisper-1");
            again.append("stream", "true");
            again.append("file", new Blob([wav]), "a.wav");
            return again;
        })()}));
        expect(after.events.at(-1)?.event).toBe("transcript.text.done");
    });
});
