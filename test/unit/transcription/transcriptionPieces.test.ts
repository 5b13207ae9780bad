import { describe, expect, it } from "vitest";
import { toSegments } from "../../../src/capabilities/transcription/onnx/WhisperModel.js";
import { formatTranscript, timecode } from "../../../src/capabilities/transcription/formatTranscript.js";
import { toTranscriptionRequest } from "../../../src/capabilities/transcription/toTranscriptionRequest.js";
import type { UploadedFile } from "../../../src/core/http/UploadedFile.js";

const begin = 1000;
/** A timestamp token for `seconds`. */
const at = (seconds: number) => begin + Math.round(seconds / 0.02);

describe("toSegments (a window's tokens as timed segments)", () => {
    const scores = (tokens: number[]) => tokens.map((_, index) => -index / 10);

    it("pairs <|t0|> text <|t1|>, keeps the last complete end, and leaves an unclosed run partial", () => {
        const tokens = [at(0), 1, 2, at(1.5), at(1.5), 3, at(2.4), at(3), 4, 5];
        const {complete, partial, lastEnd} = toSegments(tokens, scores(tokens), begin, 30);
        expect(complete.map(({start, end, tokens: text}) => ({start, end, text}))).toEqual([
            {start: 0, end: 1.5, text: [1, 2]},
            {start: 1.5, end: 2.4, text: [3]}
        ]);
        // The scores of a segment are those of its tokens, its timestamps included.
        expect(complete[0].logprobs).toEqual([-0, -0.1, -0.2, -0.3]);
        expect(lastEnd).toBe(2.4);
        expect(partial).toMatchObject({start: 3, end: 30, tokens: [4, 5]});
    });

    it("never goes back in time, and clamps times to the window", () => {
        const tokens = [at(2), 1, at(1), at(5), 2, at(29)];
        const {complete} = toSegments(tokens, scores(tokens), begin, 10);
        expect(complete.map(({start, end}) => [start, end])).toEqual([[2, 2], [5, 10]]);
    });

    it("text with no timestamp at all is one partial segment over the window", () => {
        const {complete, partial, lastEnd} = toSegments([1, 2, 3], [-1, -1, -1], begin, 12.5);
        expect(complete).toEqual([]);
        expect(lastEnd).toBeNull();
        expect(partial).toMatchObject({start: 0, end: 12.5, tokens: [1, 2, 3]});
    });
});

describe("formatTranscript", () => {
    const segment = (id: number, start: number, end: number, text: string) =>
        ({id, seek: 0, start, end, text, tokens: [1], avgLogprob: -0.5, compressionRatio: 1, noSpeechProb: 0.1});
    const transcript = {
        task: "transcribe" as const, language: "de", seconds: 3723.5, temperature: 0, text: " Hallo. Welt",
        segments: [segment(0, 0, 1.5, " Hallo."), segment(1, 3661.0015, 3723.5, " Welt")]
    };

    it("timecodes for SubRip and WebVTT", () => {
        expect(timecode(3661.0015, ",")).toBe("01:01:01,002");
        expect(timecode(0.1, ".")).toBe("00:00:00.100");
    });

    it("srt, vtt, text, json and verbose_json as OpenAI's Whisper writes them", () => {
        expect(formatTranscript(transcript, "srt").body).toBe("1\n00:00:00,000 --> 00:00:01,500\nHallo.\n\n2\n01:01:01,002 --> 01:02:03,500\nWelt\n");
        expect(formatTranscript(transcript, "vtt")).toEqual({type: "text/vtt; charset=utf-8", body: "WEBVTT\n\n00:00:00.000 --> 00:00:01.500\nHallo.\n\n01:01:01.002 --> 01:02:03.500\nWelt\n"});
        expect(formatTranscript(transcript, "text").body).toBe("Hallo. Welt\n");
        expect(formatTranscript(transcript, "json").body).toEqual({text: "Hallo. Welt", usage: {type: "duration", seconds: 3724}});
        expect(formatTranscript(transcript, "verbose_json").body).toMatchObject({
            task: "transcribe", language: "german", duration: 3723.5, text: "Hallo. Welt",
            segments: [{id: 0, seek: 0, start: 0, end: 1.5, text: " Hallo.", tokens: [1], temperature: 0, avg_logprob: -0.5, compression_ratio: 1, no_speech_prob: 0.1}, {id: 1}]
        });
        expect(formatTranscript({...transcript, task: "translate"}, "verbose_json").body).toMatchObject({task: "translate", language: "english"});
    });
});

describe("toTranscriptionRequest", () => {
    const file: UploadedFile = {field: "file", name: "a.wav", mimeType: "audio/wav", bytes: new Uint8Array([1])};

    it("parses the string fields of a form", () => {
        expect(toTranscriptionRequest({model: "whisper-1", temperature: "0.2", stream: "true", language: "de", prompt: "p",
            response_format: "verbose_json", "timestamp_granularities[]": ["segment"]}, [file], "transcribe").request).toEqual({
            model: "whisper-1", task: "transcribe", language: "de", prompt: "p", temperature: 0.2, responseFormat: "verbose_json", stream: true
        });
        expect(toTranscriptionRequest({model: "m"}, [file], "translate").request).toMatchObject({task: "translate", temperature: 0, responseFormat: "json", stream: false, language: null});
    });

    it("names the field of each bad value", () => {
        const param = (fields: Record<string, string | string[]>, files = [file], task: "transcribe" | "translate" = "transcribe") => {
            try {
                toTranscriptionRequest(fields, files, task);
            } catch (error) {
                return (error as {param: string}).param;
            }
            return "accepted";
        };
        expect(param({model: "m"}, [])).toBe("file");
        expect(param({model: "m"}, [{...file, bytes: new Uint8Array(0)}])).toBe("file");
        expect(param({model: "m"}, [{...file, field: "audio"}])).toBe("audio");
        expect(param({})).toBe("model");
        expect(param({model: ["a", "b"]})).toBe("model");
        expect(param({model: "m", temperature: ""})).toBe("temperature");
        expect(param({model: "m", temperature: "-0.1"})).toBe("temperature");
        expect(param({model: "m", stream: "1"})).toBe("stream");
        expect(param({model: "m", stream: "true"}, [file], "translate")).toBe("stream");
        expect(param({model: "m", chunking_strategy: "server_vad"})).toBe("chunking_strategy");
        expect(param({model: "m", "include[]": "logprobs"})).toBe("include");
        expect(param({model: "m", prompt: "x".repeat(4097)})).toBe("prompt");
        expect(param({model: "m", chunking_strategy: "auto"})).toBe("accepted");
    });
});
