import { ApiError } from "../../core/http/ApiError.js";
import type { UploadedFile } from "../../core/http/UploadedFile.js";
import { transcriptFormats, type TranscriptFormat, type TranscriptionRequest } from "./TranscriptionWire.js";

type Fields = Record<string, string | string[] | undefined>;

const transcriptionFields = new Set(["file", "model", "language", "prompt", "temperature", "response_format", "timestamp_granularities[]", "stream", "chunking_strategy", "include[]"]);
const translationFields = new Set(["file", "model", "prompt", "temperature", "response_format"]);
const maxPromptChars = 4096;

/**
 * The form of /v1/audio/transcriptions (`task` transcribe) or /v1/audio/translations (translate),
 * checked field by field: each bad one is a 400 naming it. Multipart fields are strings, so numbers and
 * booleans are parsed here (openai-node sends `temperature: 0.2` as "0.2", `stream: true` as "true").
 */
export function toTranscriptionRequest(fields: Fields, files: readonly UploadedFile[], task: "transcribe" | "translate"): {request: TranscriptionRequest, file: UploadedFile} {
    const known = task === "transcribe" ? transcriptionFields : translationFields;
    for (const name of Object.keys(fields))
        if (!known.has(name))
            throw ApiError.invalidRequest(`Unrecognized request argument supplied: ${name}`, name);
    for (const file of files)
        if (file.field !== "file")
            throw ApiError.invalidRequest(`Unexpected file field '${file.field}': send the audio as 'file'.`, file.field);
    if (fields.file != null)
        throw ApiError.invalidRequest("'file' must be an uploaded file (a multipart part with a filename), not a text field.", "file");
    const file = files.find((candidate) => candidate.field === "file");
    if (file == null)
        throw ApiError.invalidRequest("Missing required parameter: 'file'.", "file");
    if (file.size === 0)
        throw ApiError.invalidRequest("The uploaded file is empty.", "file");

    const model = text(fields, "model");
    if (model == null || model === "")
        throw ApiError.invalidRequest("Missing required parameter: 'model'.", "model");
    const language = text(fields, "language");
    if (language != null && !/^[a-z]{2,3}$/u.test(language))
        throw ApiError.invalidRequest(`Invalid language '${language}': use an ISO-639-1 code such as 'en' or 'de'.`, "language");
    const prompt = text(fields, "prompt");
    if (prompt != null && prompt.length > maxPromptChars)
        throw ApiError.invalidRequest(`'prompt' is longer than ${maxPromptChars} characters.`, "prompt");
    const temperatureText = text(fields, "temperature");
    const temperature = temperatureText == null ? 0 : Number(temperatureText);
    if (temperatureText != null && (temperatureText.trim() === "" || !Number.isFinite(temperature) || temperature < 0 || temperature > 1))
        throw ApiError.invalidRequest(`Invalid 'temperature' ${JSON.stringify(temperatureText)}: a number from 0 to 1.`, "temperature");
    const format = text(fields, "response_format") ?? "json";
    if (!(transcriptFormats as readonly string[]).includes(format))
        throw ApiError.invalidRequest(`Invalid 'response_format' '${format}': one of ${transcriptFormats.join(", ")}.`, "response_format");
    const streamText = text(fields, "stream");
    if (streamText != null && streamText !== "true" && streamText !== "false")
        throw ApiError.invalidRequest(`Invalid 'stream' '${streamText}': true or false.`, "stream");
    const granularities = list(fields, "timestamp_granularities[]");
    for (const granularity of granularities)
        if (granularity !== "segment" && granularity !== "word")
            throw ApiError.invalidRequest(`Invalid timestamp granularity '${granularity}': 'segment' or 'word'.`, "timestamp_granularities");
    if (granularities.length > 0 && format !== "verbose_json")
        throw ApiError.invalidRequest("'timestamp_granularities' requires response_format 'verbose_json'.", "timestamp_granularities");
    const chunking = text(fields, "chunking_strategy");
    if (chunking != null && chunking !== "auto")
        throw ApiError.invalidRequest("Only chunking_strategy 'auto' is supported (30 s windows).", "chunking_strategy");
    const include = list(fields, "include[]");
    for (const item of include)
        if (item !== "logprobs")
            throw ApiError.invalidRequest(`Invalid 'include' item '${item}': only 'logprobs'.`, "include");
    // As OpenAI: log-probabilities come with the json format (and in streamed events, whose format is json).
    if (include.length > 0 && format !== "json")
        throw ApiError.invalidRequest("'include[]=logprobs' requires response_format 'json'.", "include");
    return {
        request: {
            model, task, language, prompt, temperature, responseFormat: format as TranscriptFormat, stream: streamText === "true",
            logprobs: include.length > 0,
            // verbose_json has segments unless only words are asked for (OpenAI's shape).
            granularities: {segment: granularities.length === 0 || granularities.includes("segment"), word: granularities.includes("word")}
        },
        file
    };
}

function text(fields: Fields, name: string): string | null {
    const value = fields[name];
    if (value == null)
        return null;
    if (Array.isArray(value))
        throw ApiError.invalidRequest(`'${name}' must be sent once.`, name);
    return value;
}

function list(fields: Fields, name: string): string[] {
    const value = fields[name];
    return value == null ? [] : Array.isArray(value) ? value : [value];
}
