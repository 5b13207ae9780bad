/** The sampling fields chat and legacy completions requests share, with OpenAI's bounds (null = the default). */
const nullable = (schema: Record<string, unknown>) => ({...schema, type: [schema.type as string, "null"]});
const maxSafe = Number.MAX_SAFE_INTEGER;

export const samplingSchema = {
    temperature: nullable({type: "number", minimum: 0, maximum: 2}),
    top_p: nullable({type: "number", minimum: 0, maximum: 1}),
    seed: nullable({type: "integer", minimum: -maxSafe, maximum: maxSafe}),
    frequency_penalty: nullable({type: "number", minimum: -2, maximum: 2}),
    presence_penalty: nullable({type: "number", minimum: -2, maximum: 2}),
    // llama-server's and vLLM's own sampling fields, which their users send to any OpenAI-compatible server.
    top_k: nullable({type: "integer", minimum: -1, maximum: maxSafe}),
    min_p: nullable({type: "number", minimum: 0, maximum: 1}),
    repeat_penalty: nullable({type: "number", exclusiveMinimum: 0, maximum: 10}),
    repetition_penalty: nullable({type: "number", exclusiveMinimum: 0, maximum: 10}),
    repeat_last_n: nullable({type: "integer", minimum: -1, maximum: maxSafe}),
    ignore_eos: nullable({type: "boolean"}),
    logit_bias: nullable({
        type: "object",
        propertyNames: {pattern: "^(0|[1-9][0-9]{0,9})$"},
        additionalProperties: {type: "number", minimum: -100, maximum: 100}
    })
};

/**
 * Longest stop sequence, in characters: a stop sequence is matched against the text as it is generated, and text
 * that may be its beginning is held back, so its length bounds the work per generated token. OpenAI documents no
 * bound; real stop sequences are a few characters.
 */
export const maxStopLength = 4096;

/** The `stop` field of chat completions and completions: a string or up to 4 of them (OpenAI's bound). */
export const stopSchema = {
    type: ["string", "array", "null"],
    minLength: 1,
    maxLength: maxStopLength,
    maxItems: 4,
    items: {type: "string", minLength: 1, maxLength: maxStopLength}
};
