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
    /** `stream: true` (transcriptions only): transcript.text.* events. */
    stream: boolean;
    /** `include[]=logprobs`: the text tokens' log-probabilities (json and streamed events). */
    logprobs: boolean;
    /** `timestamp_granularities[]` of verbose_json: segments (the default) and/or words. */
    granularities: {segment: boolean, word: boolean};
};

export type DurationUsage = {type: "duration", seconds: number};

/** verbose_json's segments, as OpenAI's Whisper sends them. */
export type WireSegment = {
    id: number; seek: number; start: number; end: number; text: string; tokens: number[];
    temperature: number; avg_logprob: number; compression_ratio: number; no_speech_prob: number;
};

/** A text token's log-probability (openai-node `Transcription.Logprob`). */
export type WireLogprob = {token: string, bytes: number[], logprob: number};
/** A word of verbose_json's `words` (openai-node `TranscriptionWord`). */
export type WireWord = {word: string, start: number, end: number};

export type TranscriptionJson = {text: string, usage: DurationUsage, logprobs?: WireLogprob[]};
export type TranscriptionVerboseJson = {
    task: "transcribe" | "translate", language: string, duration: number, text: string, segments?: WireSegment[], words?: WireWord[], usage: DurationUsage
};

export type TranscriptTextDeltaEvent = {type: "transcript.text.delta", delta: string, segment_id?: string, logprobs?: WireLogprob[]};
export type TranscriptTextDoneEvent = {
    type: "transcript.text.done"; text: string; logprobs?: WireLogprob[];
    usage: {type: "tokens", input_tokens: number, output_tokens: number, total_tokens: number, input_token_details: {audio_tokens: number, text_tokens: number}};
};
