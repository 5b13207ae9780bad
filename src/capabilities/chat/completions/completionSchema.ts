import { samplingSchema, stopSchema } from "../samplingSchema.js";
/**
 * JSON schema of a legacy completion request. Known fields are checked for type and range; unknown
 * fields are allowed (as for chat). The checks a schema cannot express (token ids against the
 * model's vocabulary, `best_of` >= `n`, `suffix` on a model without fill-in-the-middle tokens) are
 * in toCompletionJob.
 */
const nullable = (schema: Record<string, unknown>) => ({...schema, type: [schema.type as string, "null"]});
const maxSafe = Number.MAX_SAFE_INTEGER;
/** OpenAI's bound for `best_of`; `n` can never usefully exceed it either (and the model's `parallel` bounds both). */
const maxChoices = 20;

export const completionSchema = {
    type: "object",
    required: ["model", "prompt"],
    properties: {
        model: {type: "string", minLength: 1},
        // A string or a non-empty array; what the array holds (strings, token ids or token-id arrays,
        // all of one kind) is checked by toCompletionJob, which can name the first item that breaks it.
        prompt: {type: ["string", "array"], minItems: 1},
        suffix: {type: ["string", "null"]},
        max_tokens: nullable({type: "integer", minimum: 0, maximum: maxSafe}),
        // OpenAI's sampling fields and llama-server's / vLLM's own, as both endpoints take them.
        ...samplingSchema,
        n: nullable({type: "integer", minimum: 1, maximum: maxChoices}),
        best_of: nullable({type: "integer", minimum: 1, maximum: maxChoices}),
        stop: stopSchema,
        logprobs: nullable({type: "integer", minimum: 0, maximum: 5}),
        echo: {type: ["boolean", "null"]},
        stream: {type: ["boolean", "null"]},
        stream_options: nullable({
            type: "object",
            properties: {include_usage: {type: "boolean"}}
        }),
        user: {type: ["string", "null"], maxLength: 512}
    }
} as const;
