import os from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { audioFormats, type AudioFormat } from "../../src/media/audio/audioFormats.js";
import { timeStretch } from "../../src/media/audio/timeStretch.js";
import { concatSamples } from "../../src/media/audio/concatSamples.js";
import { maxDifference } from "../unit/media/audio/compareAudio.js";
import { expectSpeechMatches } from "../support/compareSpeech.js";
import { decodeSpeech } from "../support/decodeSpeech.js";
import { FakeChatEngine } from "../support/FakeChatEngine.js";
import { FakeSpeechEngine } from "../support/FakeSpeechEngine.js";
import { jsonOf, readSse, startTestServer, type TestServer } from "../support/startTestServer.js";

const input = "First sentence here. Second one! Third?";
const contentTypes: Record<AudioFormat, string> = {
    mp3: "audio/mpeg", opus: "audio/ogg", aac: "audio/aac", flac: "audio/flac", wav: "audio/wav", pcm: "audio/pcm"
};
const existingPath = os.tmpdir();

const joined = (parts: Float32Array[]) => parts.reduce((all, part) => concatSamples(all, part), new Float32Array(0));

async function bytesOf(response: Response) {
    return new Uint8Array(await response.arrayBuffer());
}

/** Reads until at least `minBytes` arrived (or the body ended). */
async function readAtLeast(reader: ReadableStreamDefaultReader<Uint8Array>, minBytes: number): Promise<Uint8Array[]> {
    const chunks: Uint8Array[] = [];
    let total = 0;
    while (total < Math.max(1, minBytes)) {
        const {value, done} = await reader.read();
        if (done)
            break;
        chunks.push(value);
        total += value.length;
    }
    return chunks;
}

async function readRest(reader: ReadableStreamDefaultReader<Uint8Array>, chunks: Uint8Array[]): Promise<Uint8Array> {
    for (;;) {
        const {value, done} = await reader.read();
        if (done)
            break;
        chunks.push(value);
    }
    return Buffer.concat(chunks);
}

/** Polls /health until `check` holds, a bounded number of times (each a full HTTP round trip, no sleeps). */
async function waitForHealth(server: TestServer, check: (models: Record<string, {busy: number, waiting: number}>) => boolean) {
    for (let attempt = 0; attempt < 500; attempt++) {
        const health = await jsonOf(await fetch(`${server.url}/health`));
        if (check(health.models))
            return;
        await new Promise((resolve) => setImmediate(resolve));
    }
    throw new Error("/health never reached the expected state");
}

describe("/v1/audio/speech against fake engines with known audio", () => {
    let server: TestServer;
    // Kokoro-like: 24 kHz with a speed input. VITS-like: 16 kHz, one voice, no speed input.
    const kokoro = new FakeSpeechEngine("fake-kokoro", {sampleRate: 24_000, hasSpeedInput: true, parallel: 2});
    const vits = new FakeSpeechEngine("fake-vits", {sampleRate: 16_000, hasSpeedInput: false, voices: ["default"], voiceAliases: {alloy: "default"}, parallel: 2});
    const engines: Record<string, FakeSpeechEngine> = {"fake-kokoro": kokoro, "fake-vits": vits};

    beforeAll(async () => {
        server = await startTestServer({
            models: [
                {id: "fake-kokoro", task: "speech", path: existingPath, aliases: ["tts-1"]},
                {id: "fake-vits", task: "speech", path: existingPath},
                {id: "fake-chat", task: "chat", path: existingPath}
            ],
            factories: {
                speech: async (entry) => engines[entry.id],
                chat: async () => new FakeChatEngine("fake-chat", {pieces: ["a"]})
            }
        });
    });
    afterAll(() => server.stop());

    /** The audio the engine produced for its latest job, stretched as the handler must when the model has no speed input. */
    const referenceOf = (engine: FakeSpeechEngine, speed = 1) =>
        joined(engine.produced.at(-1)!.map((sentence) => engine.hasSpeedInput || speed === 1 ? sentence : timeStretch(sentence, engine.sampleRate, speed)));

    describe.each(["fake-kokoro", "fake-vits"])("%s", (model) => {
        const engine = () => engines[model];

        it.each([...audioFormats])("%s: streamed and stream:false both decode to the engine's audio, and to the same audio", async (format) => {
            const streamed = await server.post("/v1/audio/speech", {model, input, response_format: format});
            expect(streamed.status).toBe(200);
            expect(streamed.headers.get("content-type")).toBe(contentTypes[format]);
            expect(streamed.headers.get("transfer-encoding")).toBe("chunked");
            expect(streamed.headers.get("content-length")).toBeNull();
            const streamedBytes = await bytesOf(streamed);
            const reference = referenceOf(engine());
            expect(engine().produced.at(-1)!.length).toBe(3);
            const decodedStreamed = await decodeSpeech(format, streamedBytes);
            expectSpeechMatches(format, decodedStreamed, reference, engine().sampleRate);

            const whole = await server.post("/v1/audio/speech", {model, input, response_format: format, stream: false});
            expect(whole.status).toBe(200);
            expect(whole.headers.get("content-type")).toBe(contentTypes[format]);
            const wholeBytes = await bytesOf(whole);
            expect(whole.headers.get("content-length")).toBe(String(wholeBytes.length));
            expect(whole.headers.get("transfer-encoding")).toBeNull();
            const decodedWhole = await decodeSpeech(format, wholeBytes);
            expectSpeechMatches(format, decodedWhole, referenceOf(engine()), engine().sampleRate);
            expect(maxDifference(decodedWhole.samples, decodedStreamed.samples)).toBe(0);
            expect(decodedWhole.samples.length).toBe(decodedStreamed.samples.length);

            if (format === "wav") {
                // Streamed: one header with OpenAI's "unknown length" sizes; whole: the true sizes.
                expect(decodedStreamed.declared).toEqual({riffSize: 0xFFFFFFFF, dataSize: 0xFFFFFFFF});
                expect(decodedWhole.declared).toEqual({riffSize: wholeBytes.length - 8, dataSize: wholeBytes.length - 44});
                expect(Buffer.from(streamedBytes).indexOf("RIFF", 1)).toBe(-1);
                expect(streamedBytes.subarray(44)).toEqual(wholeBytes.subarray(44));
            }
            if (format === "flac") {
                expect(decodedStreamed.declared?.totalSamples).toBe(0);
                expect(decodedWhole.declared?.totalSamples).toBe(reference.length);
            }
            if (format === "pcm" || format === "mp3")
                expect(streamedBytes).toEqual(wholeBytes);
        });

        it("SSE: deltas concatenate to the audio stream's bytes; done carries the usage; no [DONE]; any Accept", async () => {
            const audio = await bytesOf(await server.post("/v1/audio/speech", {model, input, response_format: "wav"}));
            const samples = referenceOf(engine()).length;
            const response = await server.post("/v1/audio/speech", {model, input, response_format: "wav", stream_format: "sse"},
                {headers: {"Content-Type": "application/json", "Accept": "application/octet-stream"}});
            expect(response.status).toBe(200);
            expect(response.headers.get("content-type")).toContain("text/event-stream");
            const {events, raw} = await readSse(response);
            expect(raw).not.toContain("[DONE]");
            const deltas = events.slice(0, -1);
            expect(deltas.length).toBeGreaterThanOrEqual(3);
            for (const event of deltas) {
                expect(event.event).toBe("speech.audio.delta");
                expect(Object.keys(JSON.parse(event.data))).toEqual(["type", "audio"]);
                expect(JSON.parse(event.data).type).toBe("speech.audio.delta");
            }
            expect(Buffer.concat(deltas.map((event) => Buffer.from(JSON.parse(event.data).audio, "base64")))).toEqual(Buffer.from(audio));
            const done = events.at(-1)!;
            expect(done.event).toBe("speech.audio.done");
            const outputTokens = Math.ceil(samples * 50 / engine().sampleRate);
            expect(JSON.parse(done.data)).toEqual({
                type: "speech.audio.done",
                usage: {input_tokens: input.length, output_tokens: outputTokens, total_tokens: input.length + outputTokens}
            });
        });

        it("the first bytes leave before the engine may synthesize the second sentence", async () => {
            for (const format of audioFormats) {
                const gate = engine().holdBefore(1);
                const response = await server.post("/v1/audio/speech", {model, input, response_format: format});
                expect(response.status).toBe(200);
                await gate.reached;
                const reader = response.body!.getReader();
                // For wav: the header and every sample of the first sentence, while sentence 2 does not exist yet.
                const firstSentence = engine().produced.at(-1)![0].length;
                const early = await readAtLeast(reader, format === "wav" ? 44 + 2 * firstSentence : 1);
                expect(engine().produced.at(-1)!.length, format).toBe(1);
                expect(early.reduce((sum, chunk) => sum + chunk.length, 0), format).toBeGreaterThan(0);
                gate.release();
                const all = await readRest(reader, early);
                expectSpeechMatches(format, await decodeSpeech(format, all), referenceOf(engine()), engine().sampleRate);
            }
        });
    });

    it("SSE: the first delta leaves before the engine may synthesize the second sentence", async () => {
        const gate = kokoro.holdBefore(1);
        const response = await server.post("/v1/audio/speech", {model: "fake-kokoro", input, response_format: "pcm", stream_format: "sse"});
        expect(response.status).toBe(200);
        await gate.reached;
        const reader = response.body!.getReader();
        let text = "";
        while (!text.includes("\n\n"))
            text += Buffer.from((await reader.read()).value!).toString();
        expect(kokoro.produced.at(-1)!.length).toBe(1);
        const first = JSON.parse(text.split("\n").find((line) => line.startsWith("data: "))!.slice(6));
        expect(first.type).toBe("speech.audio.delta");
        expect(Buffer.from(first.audio, "base64").length).toBeGreaterThan(0);
        gate.release();
        while (!(await reader.read()).done);
    });

    it("speed: a model with a speed input gets it; one without gets 1 and the audio is time-stretched (duration scales)", async () => {
        const lengthOf = async (model: string, speed: number) =>
            (await decodeSpeech("wav", await bytesOf(await server.post("/v1/audio/speech", {model, input, response_format: "wav", speed})))).samples.length;

        const kokoroNormal = await lengthOf("fake-kokoro", 1);
        const kokoroFast = await lengthOf("fake-kokoro", 2);
        expect(kokoro.jobs.at(-1)!.speed).toBe(2);
        expect(kokoroFast / kokoroNormal).toBeCloseTo(0.5, 2);

        const vitsNormal = await lengthOf("fake-vits", 1);
        const response = await server.post("/v1/audio/speech", {model: "fake-vits", input, response_format: "wav", speed: 2});
        const decoded = await decodeSpeech("wav", await bytesOf(response));
        expect(vits.jobs.at(-1)!.speed).toBe(1);
        expect(vits.produced.at(-1)!.reduce((sum, sentence) => sum + sentence.length, 0)).toBe(vitsNormal);
        expect(decoded.samples.length / vitsNormal).toBeCloseTo(0.5, 2);
        expectSpeechMatches("wav", decoded, referenceOf(vits, 2), 16_000);

        const slow = await decodeSpeech("wav", await bytesOf(await server.post("/v1/audio/speech", {model: "fake-vits", input, response_format: "wav", speed: 0.5})));
        expect(slow.samples.length / vitsNormal).toBeCloseTo(2, 2);
    });

    it("voices: aliases, own names, {id}, the default; the chosen voice reaches the engine", async () => {
        for (const [voice, expected] of [["alloy", "af_heart"], ["onyx", "am_onyx"], ["am_onyx", "am_onyx"], [{id: "onyx"}, "am_onyx"], [undefined, "af_heart"]] as const) {
            const response = await server.post("/v1/audio/speech", {model: "tts-1", input: "Hi.", voice, response_format: "pcm"});
            expect(response.status).toBe(200);
            await response.arrayBuffer();
            expect(kokoro.jobs.at(-1)!.voice).toBe(expected);
        }
    });

    it("the official openai client's audio.speech.create works and its bytes decode to the engine's audio", async () => {
        const response = await server.client.audio.speech.create({model: "tts-1", voice: "alloy", input});
        const bytes = new Uint8Array(await response.arrayBuffer());
        expectSpeechMatches("mp3", await decodeSpeech("mp3", bytes), referenceOf(kokoro), 24_000);
        const wav = await server.client.audio.speech.create({model: "fake-vits", voice: "alloy", input, response_format: "wav", speed: 1.5});
        expectSpeechMatches("wav", await decodeSpeech("wav", new Uint8Array(await wav.arrayBuffer())), referenceOf(vits, 1.5), 16_000);
    });

    it.each<[string, Record<string, unknown>, number, string | null]>([
        ["an unknown voice", {model: "fake-kokoro", input, voice: "ballad"}, 400, "voice"],
        ["an empty input", {model: "fake-kokoro", input: ""}, 400, "input"],
        ["an input past 4096 characters", {model: "fake-kokoro", input: "a".repeat(4097)}, 400, "input"],
        ["a bad format", {model: "fake-kokoro", input, response_format: "ogg"}, 400, "response_format"],
        ["a speed past 4", {model: "fake-kokoro", input, speed: 5}, 400, "speed"],
        ["an unknown model", {model: "nope", input}, 404, "model"],
        ["a chat model", {model: "fake-chat", input}, 400, "model"]
    ])("%s is a JSON error naming the field, before any audio", async (_name, body, status, param) => {
        const response = await server.post("/v1/audio/speech", body);
        expect(response.status).toBe(status);
        expect(response.headers.get("content-type")).toContain("application/json");
        expect((await jsonOf(response)).error.param).toBe(param);
    });

    it("an engine failure before the first sentence is a JSON 500; after the headers it cuts the audio body or sends an SSE error event", async () => {
        kokoro.failBefore(0, new Error("secret /internal/path"));
        const before = await server.post("/v1/audio/speech", {model: "fake-kokoro", input});
        expect(before.status).toBe(500);
        const body = await jsonOf(before);
        expect(body.error.type).toBe("server_error");
        expect(JSON.stringify(body)).not.toContain("secret");

        kokoro.failBefore(1, new Error("secret"));
        const audio = await server.post("/v1/audio/speech", {model: "fake-kokoro", input, response_format: "wav"});
        expect(audio.status).toBe(200);
        await expect(audio.arrayBuffer()).rejects.toThrow();

        kokoro.failBefore(1, new Error("secret"));
        const sse = await server.post("/v1/audio/speech", {model: "fake-kokoro", input, stream_format: "sse"});
        expect(sse.status).toBe(200);
        const {events} = await readSse(sse);
        expect(events.at(-1)!.event).toBe("error");
        expect(JSON.parse(events.at(-1)!.data).error.type).toBe("server_error");
        expect(events.some((event) => event.event === "speech.audio.done")).toBe(false);
        await waitForHealth(server, (models) => models["fake-kokoro"].busy === 0);
    });

    it.each(["audio", "sse"])("a client that disconnects mid-stream (%s) stops the engine at the next sentence and frees it", async (streamFormat) => {
        for (const format of ["aac", "wav"] as const) {
            const gate = kokoro.holdBefore(1);
            const abortsBefore = kokoro.aborts.length;
            const controller = new AbortController();
            const response = await server.post("/v1/audio/speech", {model: "fake-kokoro", input, response_format: format, stream_format: streamFormat},
                {signal: controller.signal});
            expect(response.status).toBe(200);
            await gate.reached;
            const reader = response.body!.getReader();
            await reader.read();
            expect((await jsonOf(await fetch(`${server.url}/health`))).models["fake-kokoro"].busy).toBe(1);
            controller.abort();
            await waitForHealth(server, (models) => models["fake-kokoro"].busy === 0);
            expect(kokoro.aborts.length).toBe(abortsBefore + 1);
            expect(kokoro.produced.at(-1)!.length).toBe(1);
            gate.release();
        }
    });

    it("/v1/models lists speech models with their endpoint", async () => {
        const models = await jsonOf(await fetch(`${server.url}/v1/models`));
        expect(models.data.find((model: {id: string}) => model.id === "fake-kokoro")).toMatchObject({task: "speech", endpoints: ["/v1/audio/speech"], aliases: ["tts-1"]});
    });

    it("GET /v1/audio/voices lists a model's voices and their aliases; names the model when several are served", async () => {
        const voices = await jsonOf(await fetch(`${server.url}/v1/audio/voices?model=tts-1`));
        expect(voices).toEqual({
            object: "list", model: "fake-kokoro", default: "af_heart", sample_rate: 24_000,
            data: [{id: "af_heart", object: "voice", aliases: ["alloy"]}, {id: "am_onyx", object: "voice", aliases: ["onyx"]}],
            voices: ["af_heart", "am_onyx"]
        });
        const several = await fetch(`${server.url}/v1/audio/voices`);
        expect(several.status).toBe(400);
        expect((await jsonOf(several)).error).toMatchObject({param: "model"});
        const unknown = await fetch(`${server.url}/v1/audio/voices?model=nope`);
        expect(unknown.status).toBe(404);
        const chat = await fetch(`${server.url}/v1/audio/voices?model=fake-chat`);
        expect(chat.status).toBe(400);
        expect((await jsonOf(chat)).error.param).toBe("model");
    });
});

describe("one speech model with a bounded queue", () => {
    let server: TestServer;
    const engine = new FakeSpeechEngine("only-speech", {sampleRate: 24_000, hasSpeedInput: true, parallel: 1, queueSize: 1});
    beforeAll(async () => {
        server = await startTestServer({
            models: [{id: "only-speech", task: "speech", path: existingPath}],
            factories: {speech: async () => engine}
        });
    });
    afterAll(() => server.stop());

    it("the voices list needs no model then", async () => {
        const response = await fetch(`${server.url}/v1/audio/voices`);
        expect(response.status).toBe(200);
        expect((await jsonOf(response)).model).toBe("only-speech");
    });

    it("past the queue: 503 with Retry-After; the ones admitted complete", async () => {
        const gate = engine.holdBefore(1);
        const first = await server.post("/v1/audio/speech", {model: "only-speech", input, response_format: "pcm"});
        await gate.reached;
        const second = server.post("/v1/audio/speech", {model: "only-speech", input, response_format: "pcm"});
        await waitForHealth(server, (models) => models["only-speech"].waiting === 1);
        const third = await server.post("/v1/audio/speech", {model: "only-speech", input, response_format: "pcm"});
        expect(third.status).toBe(503);
        expect(third.headers.get("retry-after")).toBe("2");
        expect((await jsonOf(third)).error.code).toBe("server_overloaded");
        gate.release();
        expect((await bytesOf(first)).length).toBeGreaterThan(0);
        const secondResponse = await second;
        expect(secondResponse.status).toBe(200);
        expect((await bytesOf(secondResponse)).length).toBe((await bytesOf(await server.post("/v1/audio/speech", {model: "only-speech", input, response_format: "pcm"}))).length);
    });
});
