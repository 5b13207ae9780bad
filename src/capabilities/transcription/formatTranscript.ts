import type { TranscriptSegment } from "./TranscriptionEngine.js";
import type { TranscriptFormat, TranscriptionJson, TranscriptionRequest, TranscriptionVerboseJson, WireLogprob, WireSegment } from "./TranscriptionWire.js";

export type Transcript = {
    task: "transcribe" | "translate";
    /** ISO-639-1 code of the spoken language (given, or detected). */
    language: string;
    seconds: number;
    text: string;
    segments: readonly TranscriptSegment[];
};

/** What the request asked for beside the format (`include[]=logprobs`, `timestamp_granularities[]`). */
export type TranscriptExtras = Pick<TranscriptionRequest, "logprobs" | "granularities">;
const noExtras: TranscriptExtras = {logprobs: false, granularities: {segment: true, word: false}};

const languageNames = new Intl.DisplayNames(["en"], {type: "language"});

/** The response body and Content-Type of each `response_format`, as OpenAI's Whisper answers. */
export function formatTranscript(transcript: Transcript, format: TranscriptFormat, extras: TranscriptExtras = noExtras): {type: string, body: string | TranscriptionJson | TranscriptionVerboseJson} {
    const text = transcript.text.trim();
    const usage = {type: "duration" as const, seconds: Math.ceil(transcript.seconds)};
    switch (format) {
        case "json":
            return {type: "application/json", body: {text, ...(extras.logprobs ? {logprobs: wireLogprobs(transcript.segments)} : {}), usage}};
        case "text":
            return {type: "text/plain; charset=utf-8", body: `${text}\n`};
        case "srt":
            return {type: "text/plain; charset=utf-8", body: cues(transcript.segments, ",").map((cue, index) => `${index + 1}\n${cue}`).join("\n")};
        case "vtt":
            return {type: "text/vtt; charset=utf-8", body: ["WEBVTT\n", ...cues(transcript.segments, ".")].join("\n")};
        case "verbose_json":
            return {
                type: "application/json",
                body: {
                    task: transcript.task, language: languageName(transcript.task === "translate" ? "en" : transcript.language),
                    duration: transcript.seconds, text,
                    ...(extras.granularities.segment ? {segments: transcript.segments.map(toWireSegment)} : {}),
                    ...(extras.granularities.word ? {words: transcript.segments.flatMap((segment) => segment.words ?? [])} : {}),
                    usage
                }
            };
    }
}

/** OpenAI's verbose_json names languages in lower-case English ("english", "german"). */
function languageName(code: string): string {
    return (languageNames.of(code) ?? code).toLowerCase();
}

/** The text tokens' log-probabilities of these segments, in order (json's `logprobs`, streamed events' too). */
export function wireLogprobs(segments: readonly TranscriptSegment[]): WireLogprob[] {
    return segments.flatMap((segment) => segment.logprobs ?? []);
}

function toWireSegment(segment: TranscriptSegment): WireSegment {
    return {
        id: segment.id, seek: segment.seek, start: segment.start, end: segment.end, text: segment.text, tokens: segment.tokens,
        temperature: segment.temperature, avg_logprob: segment.avgLogprob, compression_ratio: segment.compressionRatio, no_speech_prob: segment.noSpeechProb
    };
}

function cues(segments: readonly TranscriptSegment[], decimal: "," | "."): string[] {
    return segments.map((segment) => `${timecode(segment.start, decimal)} --> ${timecode(segment.end, decimal)}\n${segment.text.trim()}\n`);
}

/** `HH:MM:SS,mmm` (SubRip) or `HH:MM:SS.mmm` (WebVTT). */
export function timecode(seconds: number, decimal: "," | "."): string {
    const total = Math.round(Math.max(0, seconds) * 1000);
    const two = (value: number) => String(value).padStart(2, "0");
    return `${two(Math.floor(total / 3_600_000))}:${two(Math.floor(total / 60_000) % 60)}:${two(Math.floor(total / 1000) % 60)}${decimal}${String(total % 1000).padStart(3, "0")}`;
}
