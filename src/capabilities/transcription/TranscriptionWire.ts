/** OpenAI's `response_format` of the audio endpoints (diarized_json is gpt-4o-transcribe-diarize's only). */
export const transcriptFormats = ["json", "text", "srt", "vtt", "verbose_json"] as const;
export type TranscriptFormat = typeof transcriptFormats[number];

/** The form fields of /v1/audio/transcriptions and /v1/audio/translations, checked (openai-node TranscriptionCreateParams). */
export type TranscriptionRequest = {
    model: string;
    task: "transcribe" | "translate";
    language: string | null;
    prompt: string | null;
    temperature: number;
    responseFormat: TranscriptFormat;
    /** `stream: true` (transcriptions only): transcript.text.* events. (`timestamp_granularities[]` is checked and needs nothing: segments are always timed.) */
    stream: boolean;
};

export type DurationUsage = {type: "duration", seconds: number};

/** verbose_json's segments, as OpenAI's Whisper sends them. */
export type WireSegment = {
    id: number; seek: number; start: number; end: number; text: string; tokens: number[];
    temperature: number; avg_logprob: number; compression_ratio: number; no_speech_prob: number;
};

export type TranscriptionJson = {text: string, usage: DurationUsage};
export type TranscriptionVerboseJson = {task: "transcribe" | "translate", language: string, duration: number, text: string, segments: WireSegment[], usage: DurationUsage};

export type TranscriptTextDeltaEvent = {type: "transcript.text.delta", delta: string, segment_id?: string};
export type TranscriptTextDoneEvent = {
    type: "transcript.text.done"; text: string;
    usage: {type: "tokens", input_tokens: number, output_tokens: number, total_tokens: number, input_token_details: {audio_tokens: number, text_tokens: number}};
};
