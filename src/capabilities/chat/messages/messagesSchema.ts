import { maxConversationItems } from "../chatCompletionSchema.js";
import { maxStopLength } from "../samplingSchema.js";
/**
 * JSON schema of a Messages request (compiled once at startup). Unions are tagged as Anthropic's are (a block by
 * its `type`, a message by its `role`): the variant the tag names is the one checked, so an error names the field
 * of that variant (`thinking.budget_tokens` only for `type: "enabled"`), never one of a variant the client did
 * not mean. Fields this server does not read (`cache_control`, `citations`, `context_management`, ...) are let
 * through untouched, as newer clients send them.
 */

/** An object whose `field` picks one of `variants` (each: its other properties, and which are required). */
function tagged(field: string, variants: Record<string, {properties?: Record<string, unknown>, required?: string[]}>) {
    return {
        type: "object",
        required: [field],
        properties: {[field]: {enum: Object.keys(variants)}},
        allOf: Object.entries(variants).map(([tag, variant]) => ({
            if: {required: [field], properties: {[field]: {const: tag}}},
            then: {type: "object", properties: variant.properties ?? {}, ...(variant.required != null ? {required: variant.required} : {})}
        }))
    };
}

const textBlock = tagged("type", {text: {required: ["text"], properties: {text: {type: "string"}}}});

/** A string, or a list of blocks (`items`). */
const stringOrList = (items: unknown) => ({type: ["string", "array"], items});

const imageSource = tagged("type", {
    base64: {required: ["media_type", "data"], properties: {media_type: {enum: ["image/jpeg", "image/png", "image/gif", "image/webp"]}, data: {type: "string"}}},
    url: {required: ["url"], properties: {url: {type: "string"}}},
    file: {required: ["file_id"], properties: {file_id: {type: "string"}}}
});

const contentBlock = tagged("type", {
    text: {required: ["text"], properties: {text: {type: "string"}}},
    image: {required: ["source"], properties: {source: imageSource}},
    tool_use: {required: ["id", "name", "input"], properties: {id: {type: "string", minLength: 1}, name: {type: "string", minLength: 1}, input: {type: "object"}}},
    tool_result: {required: ["tool_use_id"], properties: {
        tool_use_id: {type: "string", minLength: 1},
        content: stringOrList(tagged("type", {
            text: {required: ["text"], properties: {text: {type: "string"}}},
            // A tool search's result: loads that `defer_loading` tool.
            tool_reference: {required: ["tool_name"], properties: {tool_name: {type: "string", minLength: 1}}}
        })),
        is_error: {type: "boolean"}
    }},
    // An earlier answer's thinking, passed back: accepted, and left out of the prompt as the models' templates drop it.
    thinking: {required: ["thinking"], properties: {thinking: {type: "string"}, signature: {type: "string"}}},
    redacted_thinking: {properties: {data: {type: "string"}}}
});

const effort = {enum: ["low", "medium", "high", "xhigh", "max", null]};
const display = {enum: ["summarized", "omitted", "updates", null]};

const thinking = tagged("type", {
    enabled: {required: ["budget_tokens"], properties: {budget_tokens: {type: "integer", minimum: 1}, display}},
    adaptive: {properties: {display}},
    disabled: {},
    between_tools: {}
});

const message = tagged("role", {
    user: {required: ["content"], properties: {content: stringOrList(contentBlock)}},
    assistant: {required: ["content"], properties: {content: stringOrList(contentBlock)}},
    // Anywhere in the conversation: its text joins the system prompt; it may carry only `output_config`.
    system: {properties: {
        content: {type: ["string", "array", "null"], items: textBlock},
        output_config: {type: ["object", "null"], properties: {effort}},
        clear_at: {enum: ["next_user_message", "never", null]}
    }}
});

const conversation = {
    model: {type: "string", minLength: 1},
    messages: {type: "array", minItems: 1, maxItems: maxConversationItems, items: message},
    system: stringOrList(textBlock),
    tools: {
        type: "array",
        items: {
            type: "object",
            // A client tool; server tools (`web_search_20250305`, code execution, ...) are not run here: their type is the error.
            allOf: [{type: "object", properties: {type: {enum: ["custom", null]}}}, {type: "object", required: ["name", "input_schema"], properties: {
                name: {type: "string", pattern: "^[a-zA-Z0-9_-]{1,64}$"}, description: {type: "string"}, input_schema: {type: "object"},
                defer_loading: {type: "boolean"}
            }}]
        }
    },
    tool_choice: tagged("type", {
        auto: {properties: {disable_parallel_tool_use: {type: "boolean"}}},
        any: {properties: {disable_parallel_tool_use: {type: "boolean"}}},
        tool: {required: ["name"], properties: {name: {type: "string"}, disable_parallel_tool_use: {type: "boolean"}}},
        none: {}
    }),
    thinking,
    output_config: {type: "object", properties: {
        format: {type: ["object", "null"], required: ["type", "schema"], properties: {type: {const: "json_schema"}, schema: {type: "object"}}},
        effort
    }}
} as const;

export const messagesSchema = {
    type: "object",
    required: ["model", "max_tokens", "messages"],
    properties: {
        ...conversation,
        max_tokens: {type: "integer", minimum: 1},
        stop_sequences: {type: "array", items: {type: "string", minLength: 1, maxLength: maxStopLength}, maxItems: 16},
        temperature: {type: "number", minimum: 0, maximum: 1},
        top_p: {type: "number", minimum: 0, maximum: 1},
        top_k: {type: "integer", minimum: 0},
        metadata: {type: "object", properties: {user_id: {type: ["string", "null"]}}},
        stream: {type: "boolean"}
    }
} as const;

export const countTokensSchema = {
    type: "object",
    required: ["model", "messages"],
    properties: conversation
} as const;
