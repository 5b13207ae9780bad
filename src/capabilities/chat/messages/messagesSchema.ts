import { maxConversationItems } from "../chatCompletionSchema.js";
/** JSON schema of a Messages request (compiled once at startup); `param` errors name the field as the client sent it. */
const textBlock = {type: "object", required: ["type", "text"], properties: {type: {const: "text"}, text: {type: "string"}}};
const contentBlock = {
    oneOf: [
        textBlock,
        {type: "object", required: ["type", "id", "name", "input"], properties: {type: {const: "tool_use"}, id: {type: "string", minLength: 1}, name: {type: "string", minLength: 1}, input: {type: "object"}}},
        {type: "object", required: ["type", "tool_use_id"], properties: {
            type: {const: "tool_result"}, tool_use_id: {type: "string", minLength: 1},
            content: {anyOf: [{type: "string"}, {type: "array", items: textBlock}]}, is_error: {type: "boolean"}
        }},
        // An earlier answer's thinking, passed back: accepted, and left out of the prompt as the models' templates drop it.
        {type: "object", required: ["type", "thinking"], properties: {type: {const: "thinking"}, thinking: {type: "string"}, signature: {type: "string"}}},
        {type: "object", required: ["type"], properties: {type: {const: "redacted_thinking"}, data: {type: "string"}}}
    ]
};

const thinking = {
    oneOf: [
        {type: "object", required: ["type", "budget_tokens"], properties: {type: {const: "enabled"}, budget_tokens: {type: "integer", minimum: 1}, display: {enum: ["summarized", "omitted", null]}}},
        {type: "object", required: ["type"], properties: {type: {const: "adaptive"}, display: {enum: ["summarized", "omitted", null]}}},
        {type: "object", required: ["type"], properties: {type: {enum: ["disabled", "between_tools"]}}}
    ]
};

const conversation = {
    model: {type: "string", minLength: 1},
    messages: {
        type: "array", minItems: 1, maxItems: maxConversationItems,
        items: {type: "object", required: ["role", "content"], properties: {
            role: {enum: ["user", "assistant"]},
            content: {anyOf: [{type: "string"}, {type: "array", items: contentBlock}]}
        }}
    },
    system: {anyOf: [{type: "string"}, {type: "array", items: textBlock}]},
    tools: {
        type: "array",
        items: {type: "object", required: ["name", "input_schema"], properties: {
            name: {type: "string", pattern: "^[a-zA-Z0-9_-]{1,64}$"}, description: {type: "string"}, input_schema: {type: "object"}
        }}
    },
    tool_choice: {
        type: "object", required: ["type"],
        properties: {type: {enum: ["auto", "any", "tool", "none"]}, name: {type: "string"}, disable_parallel_tool_use: {type: "boolean"}}
    },
    thinking
} as const;

export const messagesSchema = {
    type: "object",
    required: ["model", "max_tokens", "messages"],
    properties: {
        ...conversation,
        max_tokens: {type: "integer", minimum: 1},
        stop_sequences: {type: "array", items: {type: "string", minLength: 1}, maxItems: 16},
        temperature: {type: "number", minimum: 0, maximum: 1},
        top_p: {type: "number", minimum: 0, maximum: 1},
        top_k: {type: "integer", minimum: 0},
        metadata: {type: "object", properties: {user_id: {type: ["string", "null"]}}},
        output_config: {type: "object", properties: {
            format: {anyOf: [{type: "null"}, {type: "object", required: ["type", "schema"], properties: {type: {const: "json_schema"}, schema: {type: "object"}}}]},
            effort: {type: ["string", "null"]}
        }},
        stream: {type: "boolean"}
    }
} as const;

export const countTokensSchema = {
    type: "object",
    required: ["model", "messages"],
    properties: conversation
} as const;
