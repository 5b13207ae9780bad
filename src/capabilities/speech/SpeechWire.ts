import type { AudioFormat } from "../../media/audio/audioFormats.js";

/** OpenAI wire types of /v1/audio/speech and /v1/audio/voices (kept apart from the engine types in SpeechEngine.ts). */
export type SpeechRequest = {
    model: string;
    input: string;
    /** A voice name (the model's own or an alias such as OpenAI's `alloy`) or `{"id": name}`; checked by toSpeechJob. */
    voice?: string | Record<string, unknown> | null;
    /** Accepted for compatibility; no served model takes instructions (README "Speech"). */
    instructions?: string | null;
    response_format?: AudioFormat | null;
    speed?: number | null;
    stream_format?: SpeechStreamFormat | null;
    /** Extension: `false` answers the whole file at once (Content-Length, WAV/FLAC headers with true sizes). */
    stream?: boolean | null;
};

export type SpeechStreamFormat = "audio" | "sse";

export type SpeechAudioDeltaEvent = {type: "speech.audio.delta", audio: string};

export type SpeechUsage = {input_tokens: number, output_tokens: number, total_tokens: number};

export type SpeechAudioDoneEvent = {type: "speech.audio.done", usage: SpeechUsage};

/** One voice of GET /v1/audio/voices: the model's own name and the other names it answers to. */
export type VoiceObject = {id: string, object: "voice", aliases: string[]};

export type VoicesResponse = {
    object: "list";
    model: string;
    /** The voice used when a request names none. */
    default: string;
    /** Hz of the model's own output. */
    sample_rate: number;
    data: VoiceObject[];
    /** The own names alone, as Kokoro-FastAPI answers (`{"voices": [...]}`), for its clients. */
    voices: string[];
};
