import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resample } from "../../src/media/audio/resample.js";
import { maxDifference } from "../unit/media/audio/compareAudio.js";
import { expectSpeechMatches } from "../support/compareSpeech.js";
import { decodeSpeech } from "../support/decodeSpeech.js";
import { jsonOf, startTestServer, type TestServer } from "../support/startTestServer.js";
import { tinyKokoroPath, tinyVitsPath } from "../support/testModels.js";

/** Random weights make noise-like audio, which mp3 at 64 kbit/s keeps to ~10 dB; misaligned or broken audio scores <= 0 dB. */
const noiseFloorDb = {mp3: 6, opus: 4, aac: 4};

const input = "The quick brown fox jumps over the lazy dog. It was not amused! Was it?";

/**
 * The real engines (tiny random-weight Kokoro- and VITS-shaped ONNX models in the worker pool)
 * through the server. The WAV answer is the model's own samples (16-bit), so it is the reference
 * the other formats are held to.
 */
describe("/v1/audio/speech on the tiny Kokoro and VITS models", () => {
    let server: TestServer;
    beforeAll(async () => {
        server = await startTestServer({
            config: {workers: 2, onnxThreads: 1},
            models: [
                {id: "tiny-kokoro", task: "speech", path: tinyKokoroPath, aliases: ["tts-1"]},
                {id: "tiny-vits", task: "speech", path: tinyVitsPath, parallel: 1}
            ]
        });
    });
    afterAll(() => server.stop());

    const speak = async (body: Record<string, unknown>) => {
        const response = await server.post("/v1/audio/speech", {input, ...body});
        expect(response.status, await response.clone().text().then((text) => text.slice(0, 300))).toBe(200);
        return new Uint8Array(await response.arrayBuffer());
    };

    it("Kokoro: streamed WAV (24 kHz) equals the whole file's samples; mp3 decodes to the same audio", async () => {
        const streamed = await decodeSpeech("wav", await speak({model: "tts-1", voice: "alloy", response_format: "wav"}));
        expect(streamed.sampleRate).toBe(24_000);
        expect(streamed.declared?.dataSize).toBe(0xFFFFFFFF);
        expect(streamed.samples.length).toBeGreaterThan(24_000 * 0.1);
        const whole = await decodeSpeech("wav", await speak({model: "tts-1", voice: "alloy", response_format: "wav", stream: false}));
        expect(whole.declared?.dataSize).toBe(2 * whole.samples.length);
        expect(maxDifference(whole.samples, streamed.samples)).toBe(0);

        const mp3 = await decodeSpeech("mp3", await speak({model: "tts-1", voice: "alloy"}));
        expectSpeechMatches("mp3", mp3, streamed.samples, 24_000, noiseFloorDb);
    });

    it("Kokoro: speed goes to the model's speed input (duration scales)", async () => {
        const normal = (await decodeSpeech("wav", await speak({model: "tiny-kokoro", response_format: "wav"}))).samples.length;
        const fast = (await decodeSpeech("wav", await speak({model: "tiny-kokoro", response_format: "wav", speed: 2}))).samples.length;
        expect(fast / normal).toBeGreaterThan(0.45);
        expect(fast / normal).toBeLessThan(0.55);
    });

    it("VITS: WAV at its own 16 kHz, mp3 decodes to it, pcm is resampled to 24 kHz", async () => {
        const wav = await decodeSpeech("wav", await speak({model: "tiny-vits", response_format: "wav"}));
        expect(wav.sampleRate).toBe(16_000);
        expect(wav.samples.length).toBeGreaterThan(16_000 * 0.1);
        expectSpeechMatches("mp3", await decodeSpeech("mp3", await speak({model: "tiny-vits", response_format: "mp3"})), wav.samples, 16_000, noiseFloorDb);

        const pcm = await decodeSpeech("pcm", await speak({model: "tiny-vits", response_format: "pcm"}));
        const expected = resample(wav.samples, 16_000, 24_000);
        expect(pcm.samples.length).toBe(expected.length);
        // The server resamples the model's float samples; the reference here is its 16-bit WAV: a few steps apart at most.
        expect(maxDifference(pcm.samples, expected)).toBeLessThan(4 / 0x7FFF);
    });

    it("VITS: speed without a speed input time-stretches (duration scales, the model ran at 1)", async () => {
        const normal = (await decodeSpeech("wav", await speak({model: "tiny-vits", response_format: "wav"}))).samples.length;
        for (const speed of [2, 0.5]) {
            const stretched = (await decodeSpeech("wav", await speak({model: "tiny-vits", response_format: "wav", speed}))).samples.length;
            expect(stretched / normal).toBeCloseTo(1 / speed, 2);
        }
    });

    it("input with nothing to speak in it (emoji; symbols or punctuation the tokenizer drops) is a 400 naming `input`, streamed or not", async () => {
        // Before: 200 with an empty WAV. The tokenizer decides, in the worker, once every sentence is tokenized: Kokoro's
        // vocabulary has punctuation (a pause), VITS's has none.
        for (const [model, input] of [["tiny-kokoro", "\u{1F600}"], ["tiny-kokoro", "\u{1F44D} \u{1F44D}"], ["tiny-vits", "\u{1F389} ?!"], ["tiny-vits", "# ... \u2014"]]) {
            for (const fields of [{response_format: "wav", stream: false}, {response_format: "mp3"}, {response_format: "pcm", stream_format: "sse"}]) {
                const response = await server.post("/v1/audio/speech", {model, input, ...fields});
                const what = `${model} ${JSON.stringify(input)} ${JSON.stringify(fields)}`;
                expect(response.status, what).toBe(400);
                // Streamed too: the headers wait for the first sentence with something to speak, so the refusal is plain JSON.
                expect(response.headers.get("content-type"), what).toMatch(/^application\/json/u);
                expect(await jsonOf(response), what).toEqual({error: {
                    message: `'input' has nothing to speak: the model '${model}' can pronounce none of it (it reads words and numbers; emoji, symbols and white space are not spoken).`,
                    type: "invalid_request_error", param: "input", code: null
                }});
            }
        }
        // A sentence with nothing to speak among others is left out: the audio is the spoken sentence's alone.
        const alone = await decodeSpeech("wav", await speak({model: "tiny-vits", input: "Hello there.", response_format: "wav", stream: false}));
        const mixed = await decodeSpeech("wav", await speak({model: "tiny-vits", input: "\u{1F600}! Hello there.", response_format: "wav"}));
        expect(mixed.samples).toEqual(alone.samples);
    });

    it("lists the real voices and aliases; every request left the engines idle", async () => {
        const voices = await jsonOf(await fetch(`${server.url}/v1/audio/voices?model=tts-1`));
        expect(voices.voices).toEqual(["af_alloy", "af_heart", "am_echo", "bm_fable"]);
        expect(voices.default).toBe("af_heart");
        expect(voices.data.find((voice: {id: string}) => voice.id === "af_alloy").aliases).toContain("alloy");
        const health = await jsonOf(await fetch(`${server.url}/health`));
        expect(health.models["tiny-kokoro"]).toMatchObject({busy: 0, waiting: 0});
        expect(health.models["tiny-vits"]).toMatchObject({busy: 0, waiting: 0});
    });
});
