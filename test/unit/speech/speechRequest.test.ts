import { describe, expect, it } from "vitest";
import { speechSchema } from "../../../src/capabilities/speech/speechSchema.js";
import { toSpeechJob, type SpeechEngineInfo } from "../../../src/capabilities/speech/toSpeechJob.js";
import { toVoicesResponse } from "../../../src/capabilities/speech/toVoicesResponse.js";
import { speechUsage } from "../../../src/capabilities/speech/speechUsage.js";
import type { SpeechRequest } from "../../../src/capabilities/speech/SpeechWire.js";
import { ApiError } from "../../../src/core/http/ApiError.js";
import { compileRequestValidator } from "../../../src/core/validation/compileRequestValidator.js";

const validate = compileRequestValidator<SpeechRequest>(speechSchema);

/** The ApiError a call throws (fails the test if it throws none or another kind). */
function errorOf(call: () => unknown): ApiError {
    try {
        call();
    } catch (error) {
        expect(error).toBeInstanceOf(ApiError);
        return error as ApiError;
    }
    throw new Error("expected an ApiError");
}

const kokoro: SpeechEngineInfo = {
    id: "kokoro",
    voices: ["af_heart", "af_alloy", "am_onyx"],
    defaultVoice: "af_heart",
    voiceAliases: {alloy: "af_alloy", onyx: "am_onyx", nova: "af_heart"},
    hasSpeedInput: true
};
const vits: SpeechEngineInfo = {id: "mms", voices: ["default"], defaultVoice: "default", voiceAliases: {alloy: "default"}, hasSpeedInput: false};

const base = {model: "kokoro", input: "Hello there."};

describe("speech request schema: every bound and bad value is a 400 naming the field", () => {
    it.each<[string, Record<string, unknown>, string]>([
        ["no model", {input: "x"}, "model"],
        ["an empty model", {model: "", input: "x"}, "model"],
        ["no input", {model: "m"}, "input"],
        ["an empty input", {...base, input: ""}, "input"],
        ["an input of 4097 characters", {...base, input: "a".repeat(4097)}, "input"],
        ["an input that is not a string", {...base, input: ["a"]}, "input"],
        ["a voice that is a number", {...base, voice: 3}, "voice"],
        ["a voice that is an array... of strings", {...base, voice: ["alloy"]}, "voice"],
        ["instructions that are not a string", {...base, instructions: 5}, "instructions"],
        ["instructions past 4096 characters", {...base, instructions: "a".repeat(4097)}, "instructions"],
        ["an unknown response_format", {...base, response_format: "ogg"}, "response_format"],
        ["an upper-case response_format", {...base, response_format: "MP3"}, "response_format"],
        ["speed below 0.25", {...base, speed: 0.2499}, "speed"],
        ["speed above 4", {...base, speed: 4.001}, "speed"],
        ["speed as a string", {...base, speed: "1"}, "speed"],
        ["an unknown stream_format", {...base, stream_format: "chunks"}, "stream_format"],
        ["stream that is not a boolean", {...base, stream: "false"}, "stream"]
    ])("%s", (_name, body, param) => {
        const error = errorOf(() => validate(body));
        expect(error.status).toBe(400);
        expect(error.param).toBe(param);
        expect(error.type).toBe("invalid_request_error");
    });

    it("accepts the bounds and every format, counts characters not UTF-16 units, and ignores unknown fields", () => {
        expect(() => validate({...base, input: "a".repeat(4096), speed: 0.25})).not.toThrow();
        expect(() => validate({...base, input: "a", speed: 4})).not.toThrow();
        // 4096 emoji are 8192 UTF-16 code units but 4096 characters.
        expect(() => validate({...base, input: "😀".repeat(4096)})).not.toThrow();
        for (const format of ["mp3", "opus", "aac", "flac", "wav", "pcm"])
            expect(() => validate({...base, response_format: format})).not.toThrow();
        expect(() => validate({...base, voice: {id: "alloy"}, stream_format: "sse", instructions: "Speak softly.", future_field: {x: 1}})).not.toThrow();
        expect(() => validate({...base, voice: null, response_format: null, speed: null, stream_format: null, stream: null, instructions: null})).not.toThrow();
    });
});

describe("toSpeechJob", () => {
    const plan = (request: Partial<SpeechRequest>, info = kokoro) => toSpeechJob({...base, ...request}, info);

    it("defaults: the model's default voice, mp3, speed 1, streamed audio", () => {
        expect(plan({})).toEqual({
            job: {input: "Hello there.", voice: "af_heart", speed: 1},
            format: "mp3", streamFormat: "audio", streamed: true, stretch: 1
        });
        expect(plan({voice: null, response_format: null, speed: null, stream_format: null, stream: null})).toEqual(plan({}));
    });

    it("resolves own names, aliases, {id} and a different case", () => {
        expect(plan({voice: "am_onyx"}).job.voice).toBe("am_onyx");
        expect(plan({voice: "alloy"}).job.voice).toBe("af_alloy");
        expect(plan({voice: "nova"}).job.voice).toBe("af_heart");
        expect(plan({voice: {id: "onyx"}}).job.voice).toBe("am_onyx");
        expect(plan({voice: {id: "af_alloy"}}).job.voice).toBe("af_alloy");
        expect(plan({voice: "Alloy"}).job.voice).toBe("af_alloy");
        expect(plan({voice: "AF_HEART"}).job.voice).toBe("af_heart");
    });

    it("an unknown voice is a 400 naming `voice` and listing the valid names", () => {
        const error = errorOf(() => plan({voice: "ballad"}));
        expect(error.status).toBe(400);
        expect(error.param).toBe("voice");
        expect(error.message).toContain("'ballad'");
        expect(error.message).toContain("af_heart, af_alloy, am_onyx");
        expect(error.message).toContain("alloy, onyx, nova");
        expect(errorOf(() => plan({voice: {id: "voice_1234"}})).param).toBe("voice");
        expect(errorOf(() => plan({voice: ""})).param).toBe("voice");
        // An alias inherited from Object.prototype is no alias.
        expect(errorOf(() => plan({voice: "constructor"})).param).toBe("voice");
    });

    it("a voice object without a string id is a 400 naming `voice.id`", () => {
        expect(errorOf(() => plan({voice: {}})).param).toBe("voice.id");
        expect(errorOf(() => plan({voice: {id: 7}})).param).toBe("voice.id");
        expect(errorOf(() => plan({voice: {name: "alloy"}})).message).toContain("got nothing");
    });

    it("an input of only white space is a 400 naming `input`", () => {
        expect(errorOf(() => plan({input: " \n\t "})).param).toBe("input");
    });

    it("speed goes to a model with a speed input; otherwise the handler stretches and the model runs at 1", () => {
        expect(plan({speed: 1.5})).toMatchObject({job: {speed: 1.5}, stretch: 1});
        expect(plan({speed: 0.25}, vits)).toMatchObject({job: {speed: 1, voice: "default"}, stretch: 0.25});
        expect(plan({speed: 4, voice: "alloy"}, vits)).toMatchObject({job: {speed: 1, voice: "default"}, stretch: 4});
    });

    it("formats and the stream extension pass through; stream:false with sse is a 400 naming `stream`", () => {
        expect(plan({response_format: "flac", stream: false})).toMatchObject({format: "flac", streamed: false, streamFormat: "audio"});
        expect(plan({stream_format: "sse", stream: true})).toMatchObject({streamFormat: "sse", streamed: true});
        expect(errorOf(() => plan({stream_format: "sse", stream: false})).param).toBe("stream");
    });
});

describe("voices list and usage", () => {
    it("lists each own voice with the aliases that lead to it", () => {
        expect(toVoicesResponse("kokoro", {...kokoro, sampleRate: 24_000})).toEqual({
            object: "list", model: "kokoro", default: "af_heart", sample_rate: 24_000,
            data: [
                {id: "af_heart", object: "voice", aliases: ["nova"]},
                {id: "af_alloy", object: "voice", aliases: ["alloy"]},
                {id: "am_onyx", object: "voice", aliases: ["onyx"]}
            ],
            voices: ["af_heart", "af_alloy", "am_onyx"]
        });
    });

    it("counts one output token per started 20 ms of returned audio", () => {
        expect(speechUsage(12, 24_000, 24_000)).toEqual({input_tokens: 12, output_tokens: 50, total_tokens: 62});
        expect(speechUsage(3, 321, 16_000)).toEqual({input_tokens: 3, output_tokens: 2, total_tokens: 5});
        expect(speechUsage(0, 0, 16_000).output_tokens).toBe(0);
    });
});
