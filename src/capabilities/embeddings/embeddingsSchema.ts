/**
 * JSON schema of an embeddings request. The shape of `input` (four forms, limits, token ids) is
 * checked by toEmbeddingsJob, which can name the exact offending item (`input[3]`). Unknown fields
 * are allowed, as for chat.
 */
export const embeddingsSchema = {
    type: "object",
    required: ["model", "input"],
    properties: {
        model: {type: "string", minLength: 1},
        input: {type: ["string", "array"]},
        encoding_format: {type: ["string", "null"], enum: ["float", "base64", null]},
        dimensions: {type: ["integer", "null"], minimum: 1, maximum: Number.MAX_SAFE_INTEGER},
        user: {type: ["string", "null"]}
    }
} as const;
