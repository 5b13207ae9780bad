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
        temperature: samplingSchema.temperature,
        top_p: samplingSchema.top_p,
        n: nullable({type: "integer", minimum: 1, maximum: maxChoices}),
        best_of: nullable({type: "integer", minimum: 1, maximum: maxChoices}),
        stop: stopSchema,
        seed: samplingSchema.seed,
        frequency_penalty: samplingSchema.frequency_penalty,
        presence_penalty: samplingSchema.presence_penalty,
        top_k: samplingSchema.top_k,
        min_p: samplingSchema.min_p,
        repeat_penalty: samplingSchema.repeat_penalty,
        repetition_penalty: samplingSchema.repetition_penalty,
        repeat_last_n: samplingSchema.repeat_last_n,
        ignore_eos: samplingSchema.ignore_eos,
        logit_bias: samplingSchema.logit_bias,
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
