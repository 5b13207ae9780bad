import { describe, expect, it } from "vitest";
import { byteLevelBytes } from "../../../src/capabilities/transcription/onnx/byteLevelBytes.js";
import { seededSampler } from "../../../src/runtimes/onnx/seededSampler.js";
import { temperatureFallback } from "../../../src/capabilities/transcription/onnx/temperatureFallback.js";
import { timedWords } from "../../../src/capabilities/transcription/onnx/timedWords.js";
import { timestampRules } from "../../../src/capabilities/transcription/onnx/timestampRules.js";
import { tokenStartTimes } from "../../../src/capabilities/transcription/onnx/tokenStartTimes.js";
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
        // Where each segment's text tokens are, and the token after them (for word times).
        expect(complete.map(({indices, next}) => ({indices, next}))).toEqual([{indices: [1, 2], next: 3}, {indices: [5], next: 6}]);
        expect(partial).toMatchObject({indices: [8, 9], next: 10});
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
        ({id, seek: 0, start, end, text, tokens: [1], avgLogprob: -0.5, compressionRatio: 1, noSpeechProb: 0.1, temperature: id * 0.2});
    const transcript = {
        task: "transcribe" as const, language: "de", seconds: 3723.5, text: " Hallo. Welt",
        segments: [
            {...segment(0, 0, 1.5, " Hallo."), words: [{word: "Hallo.", start: 0.2, end: 1.5}], logprobs: [{token: " Hallo", bytes: [32, 72, 97, 108, 108, 111], logprob: -0.1}, {token: ".", bytes: [46], logprob: -0.2}]},
            {...segment(1, 3661.0015, 3723.5, " Welt"), words: [{word: "Welt", start: 3661.1, end: 3662}], logprobs: [{token: " Welt", bytes: [32, 87, 101, 108, 116], logprob: -0.3}]}
        ]
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
        // Each segment says the temperature its window was decoded at.
        expect((formatTranscript(transcript, "verbose_json").body as {segments: {temperature: number}[]}).segments.map((segment) => segment.temperature)).toEqual([0, 0.2]);
    });

    it("include[]=logprobs adds the text tokens' log-probabilities to json; word granularity adds words to verbose_json", () => {
        const granularities = (segment: boolean, word: boolean) => ({logprobs: false, granularities: {segment, word}});
        expect(formatTranscript(transcript, "json", {logprobs: true, granularities: {segment: true, word: false}}).body).toEqual({
            text: "Hallo. Welt",
            logprobs: [{token: " Hallo", bytes: [32, 72, 97, 108, 108, 111], logprob: -0.1}, {token: ".", bytes: [46], logprob: -0.2}, {token: " Welt", bytes: [32, 87, 101, 108, 116], logprob: -0.3}],
            usage: {type: "duration", seconds: 3724}
        });
        const words = [{word: "Hallo.", start: 0.2, end: 1.5}, {word: "Welt", start: 3661.1, end: 3662}];
        const wordsOnly = formatTranscript(transcript, "verbose_json", granularities(false, true)).body as Record<string, unknown>;
        expect(wordsOnly.words).toEqual(words);
        expect(wordsOnly).not.toHaveProperty("segments");
        const both = formatTranscript(transcript, "verbose_json", granularities(true, true)).body as unknown as Record<string, unknown[]>;
        expect({words: both.words, segments: both.segments.length}).toEqual({words, segments: 2});
        expect(formatTranscript(transcript, "verbose_json").body).not.toHaveProperty("words");
    });
});

describe("temperatureFallback (Whisper's checks of a decoded window)", () => {
    it("tries 0, 0.2 ... 1 from temperature 0, and a temperature above 0 alone", () => {
        expect(temperatureFallback.schedule(0)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
        expect(temperatureFallback.schedule(0.3)).toEqual([0.3]);
        // Manifest temperatureFallback: false.
        expect(temperatureFallback.schedule(0, false)).toEqual([0]);
    });

    it("retries repetitive or unlikely text, takes likely speech, and calls unlikely text where <|nospeech|> is likely silence", () => {
        expect(temperatureFallback.judge({compressionRatio: 1.8, avgLogprob: -0.4, noSpeechProb: 0.01})).toBe("accept");
        expect(temperatureFallback.judge({compressionRatio: 2.41, avgLogprob: -0.4, noSpeechProb: 0.01})).toBe("retry");
        expect(temperatureFallback.judge({compressionRatio: 1.8, avgLogprob: -1.01, noSpeechProb: 0.01})).toBe("retry");
        expect(temperatureFallback.judge({compressionRatio: 1.8, avgLogprob: -1.01, noSpeechProb: 0.61})).toBe("silence");
        // Likely text is speech however likely <|nospeech|> was.
        expect(temperatureFallback.judge({compressionRatio: 1.8, avgLogprob: -0.5, noSpeechProb: 0.9})).toBe("accept");
    });

    it("when none passes, the likeliest of those that are not repetitive, else of all", () => {
        const attempt = (name: string, compressionRatio: number, avgLogprob: number) => ({name, quality: {compressionRatio, avgLogprob, noSpeechProb: 0}});
        expect(temperatureFallback.best([attempt("loop", 3, -0.1), attempt("a", 2, -1.5), attempt("b", 2.2, -1.2)]).name).toBe("b");
        expect(temperatureFallback.best([attempt("loop", 3, -0.1), attempt("worse loop", 4, -0.05)]).name).toBe("worse loop");
    });
});

describe("seededSampler", () => {
    const logits = (values: number[]) => ({data: Float32Array.from(values), dims: [1, values.length]}) as unknown as Parameters<ReturnType<typeof seededSampler>>[1];
    const draw = (sampler: ReturnType<typeof seededSampler>, values: number[]) => {
        const data = sampler([], logits(values)).data as Float32Array;
        expect(data.filter((value) => value === 0).length).toBe(1);
        expect(data.filter((value) => value === -Infinity).length).toBe(values.length - 1);
        return data.indexOf(0);
    };

    it("the same seed draws the same tokens; frequencies follow the softmax at the temperature; forbidden tokens never", () => {
        const scores = [Math.log(0.5), Math.log(0.3), -Infinity, Math.log(0.2)];
        const run = (seed: number) => {
            const sampler = seededSampler(1, seed);
            return Array.from({length: 4000}, () => draw(sampler, scores));
        };
        const first = run(42);
        expect(run(42)).toEqual(first);
        expect(run(43)).not.toEqual(first);
        const share = (token: number) => first.filter((drawn) => drawn === token).length / first.length;
        expect(share(2)).toBe(0);
        expect(share(0)).toBeCloseTo(0.5, 1);
        expect(share(1)).toBeCloseTo(0.3, 1);
        expect(share(3)).toBeCloseTo(0.2, 1);
        // A low temperature all but always takes the best.
        const cold = seededSampler(0.05, 7);
        expect(Array.from({length: 200}, () => draw(cold, scores)).every((drawn) => drawn === 0)).toBe(true);
    });
});

describe("byteLevelBytes", () => {
    it("reads GPT-2's byte-level alphabet back to bytes; other entries as UTF-8", () => {
        expect(byteLevelBytes("ĠHello")).toEqual([32, 72, 101, 108, 108, 111]);
        // "é" as two byte-level characters (0xC3 0xA9), and a lone continuation byte (part of a character).
        expect(byteLevelBytes("Ã©")).toEqual([0xC3, 0xA9]);
        expect(byteLevelBytes("Ċ")).toEqual([10]);
        expect(byteLevelBytes("日本")).toEqual([...Buffer.from("日本")]);
    });
});

describe("toTranscriptionRequest", () => {
    const file: UploadedFile = {field: "file", name: "a.wav", mimeType: "audio/wav", parts: [new Uint8Array([1])], size: 1};

    it("parses the string fields of a form", () => {
        expect(toTranscriptionRequest({model: "whisper-1", temperature: "0.2", stream: "true", language: "de", prompt: "p",
            response_format: "verbose_json", "timestamp_granularities[]": ["segment"]}, [file], "transcribe").request).toEqual({
            model: "whisper-1", task: "transcribe", language: "de", prompt: "p", temperature: 0.2, responseFormat: "verbose_json", stream: true,
            logprobs: false, granularities: {segment: true, word: false}
        });
        expect(toTranscriptionRequest({model: "m", response_format: "verbose_json", "timestamp_granularities[]": "word"}, [file], "transcribe").request.granularities)
            .toEqual({segment: false, word: true});
        expect(toTranscriptionRequest({model: "m", response_format: "verbose_json", "timestamp_granularities[]": ["word", "segment"]}, [file], "transcribe").request.granularities)
            .toEqual({segment: true, word: true});
        expect(toTranscriptionRequest({model: "m", "include[]": "logprobs"}, [file], "transcribe").request.logprobs).toBe(true);
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
        expect(param({model: "m"}, [{...file, parts: [], size: 0}])).toBe("file");
        expect(param({model: "m"}, [{...file, field: "audio"}])).toBe("audio");
        expect(param({})).toBe("model");
        expect(param({model: ["a", "b"]})).toBe("model");
        expect(param({model: "m", temperature: ""})).toBe("temperature");
        expect(param({model: "m", temperature: "-0.1"})).toBe("temperature");
        expect(param({model: "m", stream: "1"})).toBe("stream");
        expect(param({model: "m", stream: "true"}, [file], "translate")).toBe("stream");
        expect(param({model: "m", chunking_strategy: "server_vad"})).toBe("chunking_strategy");
        expect(param({model: "m", "include[]": "logprobs", response_format: "verbose_json"})).toBe("include");
        expect(param({model: "m", "include[]": "logprobs", response_format: "text"})).toBe("include");
        expect(param({model: "m", "include[]": "citations"})).toBe("include");
        expect(param({model: "m", "include[]": "logprobs"}, [file], "translate")).toBe("include[]");
        expect(param({model: "m", "timestamp_granularities[]": "sentence", response_format: "verbose_json"})).toBe("timestamp_granularities");
        expect(param({model: "m", "timestamp_granularities[]": "word"})).toBe("timestamp_granularities");
        expect(param({model: "m", prompt: "x".repeat(4097)})).toBe("prompt");
        expect(param({model: "m", chunking_strategy: "auto"})).toBe("accepted");
    });
});

describe("tokenStartTimes", () => {
    it("reads transformers.js's token_timestamps so that entry i is when generated token i starts", () => {
        // 3 prompt tokens, then 4 generated (<|0.00|> " Hi" " there" <|eot|>): transformers.js pads the prompt's
        // positions with 0 and writes, at position p, the DTW time of the row that predicts token p + 1.
        const tokenTimestamps = [0, 0, 0, 0.4, 0.9, 1.3, 1.3];
        expect(tokenStartTimes(tokenTimestamps, 3)).toEqual([0, 0.4, 0.9, 1.3, 1.3]);
    });
});

describe("timedWords", () => {
    const vocabulary = ["<|0.00|>", " Hello", ",", " wor", "ld", ".", " (", "so", ")", "\uFFFD", "日", "本"];
    const decode = (tokens: number[]) => tokens.map((token) => vocabulary[token]).join("");

    it("a word runs from a token starting with a space to the next; starts and ends at token starts; punctuation joins its word", () => {
        // " Hello" "," " wor" "ld" "." " (" "so" ")"
        const tokens = [1, 2, 3, 4, 5, 6, 7, 8];
        // Times from the start of the file (this segment's window starts at 30 s).
        const starts = [31.0, 31.4, 31.5, 31.8, 32.0, 32.2, 32.3, 32.6];
        expect(timedWords(tokens, starts, 32.9, decode, {start: 30, end: 60, language: "en"})).toEqual([
            {word: "Hello,", start: 31, end: 31.5},
            {word: "world.", start: 31.5, end: 32.2},
            {word: "(so)", start: 32.2, end: 32.9}
        ]);
    });

    it("keeps words inside their segment and in order", () => {
        expect(timedWords([1, 3, 4], [0.5, 0.4, 9], 12, decode, {start: 1, end: 10, language: "en"})).toEqual([
            {word: "Hello", start: 1, end: 1},
            {word: "world", start: 1, end: 10}
        ]);
    });

    it("languages written without spaces: one word per whole character", () => {
        // Tokens 20 and 21 are the two halves of "語": alone, each decodes to U+FFFD.
        const halves = (tokens: number[]) => tokens.map((token, index) =>
            token === 20 ? (tokens[index + 1] === 21 ? "語" : "\uFFFD") : token === 21 ? (tokens[index - 1] === 20 ? "" : "\uFFFD") : vocabulary[token]).join("");
        expect(timedWords([10, 20, 21, 11], [0, 0.2, 0.3, 0.5], 0.8, halves, {start: 0, end: 5, language: "ja"})).toEqual([
            {word: "日", start: 0, end: 0.2}, {word: "語", start: 0.2, end: 0.5}, {word: "本", start: 0.5, end: 0.8}
        ]);
        expect(timedWords([10, 11], [0, 0.5], 0.8, decode, {start: 0, end: 5, language: "zh"})).toEqual([
            {word: "日", start: 0, end: 0.5}, {word: "本", start: 0.5, end: 0.8}
        ]);
    });
});

describe("timestampRules (the two of OpenAI's timestamp rules transformers.js lacks)", () => {
    const begin = 10;
    const scores = () => ({data: new Float32Array(20), dims: [1, 20]}) as unknown as Parameters<ReturnType<typeof timestampRules>>[1];
    const allowed = (ids: number[], maxInitial: number | null = 3) =>
        [...(timestampRules(begin, 2, maxInitial)([ids.map(BigInt)], scores()).data as Float32Array)].flatMap((value, token) => value === -Infinity ? [] : [token]);
    const timestamps = (from: number, to: number) => Array.from({length: to - from + 1}, (_, index) => from + index);

    it("the first timestamp is at most max_initial_timestamp_index steps", () => {
        expect(allowed([50, 51]).filter((token) => token >= begin)).toEqual(timestamps(10, 13));
        expect(allowed([50, 51], null).filter((token) => token >= begin)).toEqual(timestamps(10, 19));
    });

    it("timestamps never go back, and a segment is never empty", () => {
        // <|ts 2|> text: the closing timestamp must be later than 2.
        expect(allowed([50, 51, 12, 5]).filter((token) => token >= begin)).toEqual(timestamps(13, 19));
        // <|ts 2|> text <|ts 5|>: the next segment may open at 5, not before.
        expect(allowed([50, 51, 12, 5, 15]).filter((token) => token >= begin)).toEqual(timestamps(15, 19));
        // Text tokens are never touched.
        expect(allowed([50, 51, 12, 5, 15]).filter((token) => token < begin)).toEqual(timestamps(0, 9));
    });
});
