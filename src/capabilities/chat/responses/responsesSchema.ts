import { maxConversationItems } from "../chatCompletionSchema.js";
import { reasoningEfforts } from "../toReasoningControls.js";
/** JSON schema of a Responses request (compiled once at startup). */
const part = {type: "object", required: ["type", "text"], properties: {type: {enum: ["input_text", "output_text"]}, text: {type: "string"}}};
const item = {
    type: "object",
    properties: {
        type: {enum: ["message", "function_call", "function_call_output", "reasoning"]},
        role: {enum: ["user", "assistant", "system", "developer"]},
        content: {anyOf: [{type: "string"}, {type: "array", items: part}]},
        call_id: {type: "string", minLength: 1},
        name: {type: "string", minLength: 1},
        arguments: {type: "string"},
        output: {type: "string"}
    }
};

export const responsesSchema = {
    type: "object",
    required: ["model", "input"],
    properties: {
        model: {type: "string", minLength: 1},
        input: {type: ["string", "array"], maxItems: maxConversationItems, items: item},
        instructions: {type: ["string", "null"]},
        max_output_tokens: {type: ["integer", "null"], minimum: 1},
        temperature: {type: ["number", "null"], minimum: 0, maximum: 2},
        top_p: {type: ["number", "null"], minimum: 0, maximum: 1},
        tools: {type: "array", items: {type: "object", required: ["type"], properties: {
            type: {type: "string"}, name: {type: "string"}, description: {type: ["string", "null"]}, parameters: {type: ["object", "null"]}, strict: {type: ["boolean", "null"]}
        }}},
        tool_choice: {anyOf: [{enum: ["auto", "none", "required"]}, {type: "object", required: ["type", "name"], properties: {type: {const: "function"}, name: {type: "string"}}}]},
        parallel_tool_calls: {type: ["boolean", "null"]},
        text: {type: "object", properties: {format: {type: "object", required: ["type"], properties: {
            type: {enum: ["text", "json_object", "json_schema"]}, name: {type: "string"}, schema: {type: "object"}, strict: {type: ["boolean", "null"]}, description: {type: "string"}
        }}}},
        reasoning: {type: ["object", "null"], properties: {effort: {enum: [...reasoningEfforts, null]}, summary: {type: ["string", "null"]}}},
        metadata: {type: ["object", "null"], additionalProperties: {type: "string", maxLength: 512}, maxProperties: 16},
        user: {type: "string"},
        store: {type: ["boolean", "null"]},
        previous_response_id: {type: ["string", "null"]},
        stream: {type: ["boolean", "null"]}
    }
} as const;
