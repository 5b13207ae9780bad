import { ApiError } from "../../core/http/ApiError.js";
import type { AudioFormat } from "../../media/audio/audioFormats.js";
import type { SpeechEngine, SpeechJob } from "./SpeechEngine.js";
import type { SpeechRequest, SpeechStreamFormat } from "./SpeechWire.js";

/** What toSpeechJob needs of an engine: its static voice and speed facts, no model. */
export type SpeechEngineInfo = Pick<SpeechEngine, "id" | "voices" | "defaultVoice" | "voiceAliases" | "hasSpeedInput">;

export type SpeechResponsePlan = {
    /** What the engine is asked for (speed 1 when the handler time-stretches instead). */
    job: SpeechJob;
    format: AudioFormat;
    streamFormat: SpeechStreamFormat;
    /** false only with the `stream: false` extension: the whole file in one response with its true sizes. */
    streamed: boolean;
    /** Speed the handler applies by time-stretching each sentence (1 = none): for models without a speed input. */
    stretch: number;
};

/**
 * Converts a validated request into the engine's job and how to answer it. Pure: only the engine's
 * voice names and whether it has a speed input. Every bad value is a 400 naming its field.
 */
export function toSpeechJob(request: SpeechRequest, info: SpeechEngineInfo): SpeechResponsePlan {
    if (request.input.trim() === "")
        throw ApiError.invalidRequest("'input' has no text to speak: it is only white space.", "input");
    const streamFormat = request.stream_format ?? "audio";
    if (request.stream === false && streamFormat === "sse")
        throw ApiError.invalidRequest("'stream': false cannot be combined with 'stream_format': \"sse\", which is always a stream.", "stream");
    const speed = request.speed ?? 1;
    return {
        job: {
            input: request.input,
            voice: resolveVoice(request.voice ?? null, info),
            speed: info.hasSpeedInput ? speed : 1
        },
        format: request.response_format ?? "mp3",
        streamFormat,
        streamed: request.stream !== false,
        stretch: info.hasSpeedInput ? 1 : speed
    };
}

/** The model's own voice a request names: its own name, an alias (exact, then ignoring case), or `{"id": name}`. */
function resolveVoice(voice: SpeechRequest["voice"], info: SpeechEngineInfo): string {
    if (voice == null)
        return info.defaultVoice;
    let name: string;
    if (typeof voice === "string") {
        name = voice;
    } else {
        const id = voice.id;
        if (typeof id !== "string")
            throw ApiError.invalidRequest(
                `Invalid type for 'voice.id': expected a string naming a voice, but got ${id === undefined ? "nothing" : describe(id)}.`, "voice.id");
        name = id;
    }
    const found = lookUp(name, info);
    if (found == null)
        throw ApiError.invalidRequest(
            `Invalid value for 'voice': '${name}' is not a voice of the model '${info.id}'. ` +
            `Its voices are: ${info.voices.join(", ")}` +
            (Object.keys(info.voiceAliases).length > 0 ? `; they also answer to: ${Object.keys(info.voiceAliases).join(", ")}.` : "."),
            "voice");
    return found;
}

function lookUp(name: string, info: SpeechEngineInfo): string | undefined {
    if (info.voices.includes(name))
        return name;
    if (Object.hasOwn(info.voiceAliases, name))
        return info.voiceAliases[name];
    const lower = name.toLowerCase();
    return info.voices.find((voice) => voice.toLowerCase() === lower)
        ?? Object.entries(info.voiceAliases).find(([alias]) => alias.toLowerCase() === lower)?.[1];
}

function describe(value: unknown) {
    if (value === null) return "null";
    if (Array.isArray(value)) return "an array";
    if (typeof value === "number") return "a number";
    return `a${typeof value === "object" ? "n" : ""} ${typeof value}`;
}
