import { audioFormats } from "../../media/audio/audioFormats.js";

/** OpenAI's limit on `input` and on `instructions`, in characters. */
const maxSpeechInputCharacters = 4096;

const nullable = (schema: Record<string, unknown>) => ({...schema, type: [schema.type as string, "null"]});

/**
 * JSON schema of a speech request (OpenAI's CreateSpeechRequest, plus the `stream` extension).
 * Unknown fields are allowed, as for chat. `voice` is a string or an object here; its shape and
 * name are checked by toSpeechJob, which knows the model's voices and can list them.
 * ajv counts characters as code points, as OpenAI's 4096 does.
 */
export const speechSchema = {
    type: "object",
    required: ["model", "input"],
    properties: {
        model: {type: "string", minLength: 1},
        input: {type: "string", minLength: 1, maxLength: maxSpeechInputCharacters},
        voice: {type: ["string", "object", "null"]},
        instructions: nullable({type: "string", maxLength: maxSpeechInputCharacters}),
        response_format: {type: ["string", "null"], enum: [...audioFormats, null]},
        speed: nullable({type: "number", minimum: 0.25, maximum: 4}),
        stream_format: {type: ["string", "null"], enum: ["audio", "sse", null]},
        stream: nullable({type: "boolean"})
    }
} as const;
