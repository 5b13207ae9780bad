import { reasoningEfforts } from "./toReasoningControls.js";
import { samplingSchema, stopSchema } from "./samplingSchema.js";
/**
 * JSON schema of a chat-completion request. Known fields are checked for type and range; unknown
 * fields are allowed (clients send newer fields), and fields this server does not support yet are
 * rejected by the mapper with a message that says so.
 */
const nullable = (schema: Record<string, unknown>) => ({...schema, type: [schema.type as string, "null"]});
const maxSafe = Number.MAX_SAFE_INTEGER;

/**
 * Messages (chat, Messages API) or input items (Responses) a request may hold: generous for any real
 * conversation, and each costs the template a few tokens at least (see PromptTokenFloor).
 */
export const maxConversationItems = 10_000;

/**
 * JSON values a chat-family body may hold (messages, items, tools, `chat_template_kwargs`: all of it), refused
 * before the body reaches the main thread (see findShapeViolation): 10,000 messages of a few fields each fit. A
 * tool call's `arguments` string, parsed apart (parseLargeArguments), is bounded alike.
 */
export const maxChatJsonValues = 100_000;

const contentPart = {
    type: "object",
    required: ["type"],
    properties: {
        type: {type: "string"},
        text: {type: "string"}
    },
    allOf: [
        {if: {properties: {type: {const: "text"}}}, then: {required: ["text"], properties: {text: {type: "string"}}}},
        {
            if: {properties: {type: {const: "image_url"}}},
            then: {required: ["image_url"], properties: {image_url: {
                type: "object", required: ["url"],
                properties: {url: {type: "string"}, detail: {enum: ["auto", "low", "high", "original"]}}
            }}}
        }
    ]
};

export const chatCompletionSchema = {
    type: "object",
    required: ["model", "messages"],
    properties: {
        model: {type: "string", minLength: 1},
        messages: {
            type: "array",
            minItems: 1,
            maxItems: maxConversationItems,
            items: {
                type: "object",
                required: ["role"],
                properties: {
                    role: {enum: ["system", "developer", "user", "assistant", "tool", "function"]},
                    content: {type: ["string", "array", "null"], items: contentPart},
                    name: {type: "string"},
                    // A thinking model's earlier reasoning: accepted, and left out of the prompt (as the models' own templates drop it).
                    reasoning_content: {type: ["string", "null"]}
                }
            }
        },
        // OpenAI's sampling fields and llama-server's / vLLM's own, as both endpoints take them.
        ...samplingSchema,
        logprobs: {type: ["boolean", "null"]},
        top_logprobs: nullable({type: "integer", minimum: 0, maximum: 5}),
        max_tokens: nullable({type: "integer", minimum: 1, maximum: maxSafe}),
        max_completion_tokens: nullable({type: "integer", minimum: 1, maximum: maxSafe}),
        n: nullable({type: "integer", minimum: 1, maximum: 20}),
        response_format: nullable({
            type: "object",
            required: ["type"],
            properties: {
                type: {enum: ["text", "json_object", "json_schema"]},
                json_schema: {
                    type: "object",
                    required: ["name"],
                    properties: {
                        name: {type: "string", pattern: "^[a-zA-Z0-9_-]{1,64}$"},
                        description: {type: "string"},
                        schema: {type: "object"},
                        strict: {type: ["boolean", "null"]}
                    }
                }
            },
            if: {properties: {type: {const: "json_schema"}}},
            then: {required: ["json_schema"], properties: {json_schema: {type: "object"}}}
        }),
        stop: stopSchema,
        stream: {type: ["boolean", "null"]},
        stream_options: nullable({
            type: "object",
            properties: {include_usage: {type: "boolean"}}
        }),
        tools: {type: ["array", "null"]},
        tool_choice: {type: ["string", "object", "null"]},
        parallel_tool_calls: {type: ["boolean", "null"]},
        functions: {type: ["array", "null"]},
        function_call: {type: ["string", "object", "null"]},
        user: {type: ["string", "null"], maxLength: 512},
        reasoning_effort: {enum: [...reasoningEfforts, null]},
        chat_template_kwargs: {type: ["object", "null"], maxProperties: 64}
    }
} as const;
