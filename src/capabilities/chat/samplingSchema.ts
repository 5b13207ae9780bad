/** The sampling fields chat and legacy completions requests share, with OpenAI's bounds (null = the default). */
const nullable = (schema: Record<string, unknown>) => ({...schema, type: [schema.type as string, "null"]});
const maxSafe = Number.MAX_SAFE_INTEGER;

export const samplingSchema = {
    temperature: nullable({type: "number", minimum: 0, maximum: 2}),
    top_p: nullable({type: "number", minimum: 0, maximum: 1}),
    seed: nullable({type: "integer", minimum: -maxSafe, maximum: maxSafe}),
    frequency_penalty: nullable({type: "number", minimum: -2, maximum: 2}),
    presence_penalty: nullable({type: "number", minimum: -2, maximum: 2}),
    logit_bias: nullable({
        type: "object",
        propertyNames: {pattern: "^(0|[1-9][0-9]{0,9})$"},
        additionalProperties: {type: "number", minimum: -100, maximum: 100}
    })
};
