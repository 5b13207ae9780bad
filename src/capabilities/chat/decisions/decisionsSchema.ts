import { imageLimits } from "../vision/imageLimits.js";

/** Most questions one request may ask (OpenAI's limit). */
export const maxDecisionQuestions = 400;
/** Most choices of a `choice` question (OpenAI's limit; a model may allow fewer: its single-token labels). */
export const maxDecisionChoices = 255;

const text = {type: "string", maxLength: 1_048_576};
const part = {
    type: "object",
    required: ["type"],
    properties: {
        type: {enum: ["input_text", "input_json", "input_image", "output_text", "refusal"]},
        text, refusal: text, data: {type: ["object", "array"]}, image_url: {type: "string"}
    }
};
const content = {anyOf: [text, {type: "array", items: part, maxItems: 1000}]};
const instructions = {anyOf: [{type: "string", minLength: 1, maxLength: 65_536}, {type: "array", items: part, minItems: 1, maxItems: 100}]};
const name = {type: "string", maxLength: 256};

/** JSON schema of a /v1/decisions request (DecisionRequest); what goes together is checked by toDecisionJob. */
export const decisionsSchema = {
    type: "object",
    required: ["model", "input", "questions"],
    properties: {
        model: {type: "string", minLength: 1},
        input: {anyOf: [text, {type: "array", minItems: 1, maxItems: 10_000, items: {
            type: "object",
            properties: {
                type: {enum: ["message", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output"]},
                role: {enum: ["user", "developer", "system", "assistant"]},
                content, call_id: {type: "string"}, name: {type: "string"}, arguments: text, input: text, output: content
            }
        }}]},
        questions: {type: "array", minItems: 1, maxItems: maxDecisionQuestions, items: {
            type: "object",
            required: ["type", "instructions"],
            properties: {
                type: {enum: ["predicate", "choice", "score"]},
                instructions,
                name,
                choices: {type: "array", minItems: 2, maxItems: maxDecisionChoices, items: {
                    type: "object", required: ["value"],
                    properties: {value: {type: ["string", "boolean"], maxLength: 1024}, description: {type: "string", maxLength: 4096}}
                }},
                levels: {type: "array", minItems: 2, maxItems: maxDecisionChoices, items: {
                    type: "object", required: ["label"],
                    properties: {label: {type: "string", minLength: 1, maxLength: 1024}, description: {type: "string", maxLength: 4096}}
                }}
            }
        }},
        prompt_cache_key: {type: ["string", "null"], maxLength: 1024},
        prompt_cache_options: {type: ["object", "null"]},
        safety_identifier: {type: ["string", "null"], maxLength: 1024}
    }
} as const;

/** JSON schema of a /v1/systemone request (SystemOneRequest); each question's criteria are checked by toSystemOneJob. */
export const systemOneSchema = {
    type: "object",
    required: ["model", "state", "questions"],
    properties: {
        model: {type: "string", minLength: 1},
        state: {type: ["string", "object", "array"]},
        // Images, each referenced by its key in the state (toSystemOneRequest); as many as a chat request may hold.
        assets: {type: "object", maxProperties: imageLimits.maxImages, propertyNames: {minLength: 1, maxLength: 256}, additionalProperties: {
            type: "object",
            required: ["format", "data_base64"],
            properties: {type: {enum: ["image"]}, format: {enum: ["png", "jpeg"]}, data_base64: {type: "string"}}
        }},
        questions: {type: "object", minProperties: 1, maxProperties: maxDecisionQuestions, additionalProperties: {
            type: "object",
            required: ["type", "instructions"],
            properties: {
                type: {enum: ["noul", "choice", "score"]},
                instructions: {type: ["string", "object", "array"]},
                criteria: {type: ["object", "array"]}
            }
        }}
    }
} as const;
