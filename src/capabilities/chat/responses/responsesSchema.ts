import { maxConversationItems } from "../chatCompletionSchema.js";
import { reasoningEfforts } from "../toReasoningControls.js";
import { includables } from "./ResponsesWire.js";
/**
 * JSON schema of a Responses request (compiled once at startup). Items and tools are checked by their `type`
 * (`if`/`then`), so a bad field deep inside is named as the client sent it (`input[3].call_id`,
 * `tools[2].tools[0].name`), never as the whole `input`. Fields not listed are accepted and ignored.
 */
const nonEmpty = {type: "string", minLength: 1};
/** `then` applies to objects whose `type` is one of `types`. */
const whenType = (types: readonly string[], then: Record<string, unknown>) => ({if: {required: ["type"], properties: {type: {enum: types}}}, then});

const contentPart = {
    type: "object", required: ["type"],
    properties: {type: {enum: ["input_text", "output_text", "refusal", "input_image", "input_file", "input_audio"]}, text: {type: "string"}, refusal: {type: "string"}},
    allOf: [
        whenType(["input_text", "output_text"], {required: ["text"], properties: {text: {type: "string"}}}),
        whenType(["refusal"], {required: ["refusal"], properties: {refusal: {type: "string"}}}),
        whenType(["input_image"], {properties: {image_url: {type: ["string", "null"]}, file_id: {type: ["string", "null"]}, detail: {enum: ["auto", "low", "high", "original"]}}})
    ]
};
const toolOutput = {type: ["string", "array"], items: contentPart};

const functionTool = {required: ["name"], properties: {name: nonEmpty, description: {type: ["string", "null"]}, parameters: {type: ["object", "null"]}, strict: {type: ["boolean", "null"]}}};
const customTool = {required: ["name"], properties: {
    name: nonEmpty, description: {type: "string"},
    format: {type: "object", required: ["type"], properties: {type: {enum: ["text", "grammar"]}, syntax: {enum: ["lark", "regex"]}, definition: {type: "string"}},
        allOf: [whenType(["grammar"], {required: ["syntax", "definition"], properties: {syntax: {enum: ["lark", "regex"]}, definition: {type: "string"}}})]}
}};
const namespacedTool = {type: "object", required: ["type"], properties: {type: {enum: ["function", "custom"]}}, allOf: [whenType(["function"], functionTool), whenType(["custom"], customTool)]};
/** Any `type` passes here: built-in tools are dropped or refused by offeredTools.ts, which names them. */
const tool = {
    type: "object", required: ["type"], properties: {type: nonEmpty},
    allOf: [
        whenType(["function"], functionTool),
        whenType(["custom"], customTool),
        whenType(["namespace"], {required: ["name", "tools"], properties: {name: nonEmpty, description: {type: "string"}, tools: {type: "array", items: namespacedTool}}})
    ]
};

/** An item reference without its (optional) type: an `id` and no type, role or content. */
const present = (name: string) => ({required: [name], properties: {[name]: {}}});
const bareReference = {...present("id"), not: {anyOf: [present("type"), present("role"), present("content")]}};
const itemTypes = ["message", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output", "reasoning", "additional_tools", "item_reference"];
const item = {
    type: "object",
    properties: {type: {enum: itemTypes}, id: {type: ["string", "null"]}},
    allOf: [
        // `type` may be left out of a message (OpenAI's EasyInputMessage), and of an item reference (`{id}` alone).
        {if: {properties: {type: {const: "message"}}, not: bareReference}, then: {required: ["role", "content"], properties: {
            role: {enum: ["user", "assistant", "system", "developer"]}, content: {type: ["string", "array"], items: contentPart}
        }}},
        whenType(["function_call"], {required: ["call_id", "name", "arguments"], properties: {call_id: nonEmpty, name: nonEmpty, namespace: nonEmpty, arguments: {type: "string"}}}),
        whenType(["custom_tool_call"], {required: ["call_id", "name", "input"], properties: {call_id: nonEmpty, name: nonEmpty, namespace: nonEmpty, input: {type: "string"}}}),
        whenType(["function_call_output", "custom_tool_call_output"], {required: ["call_id", "output"], properties: {call_id: nonEmpty, output: toolOutput}}),
        whenType(["reasoning"], {properties: {
            summary: {type: "array", items: {type: "object", required: ["type", "text"], properties: {type: {const: "summary_text"}, text: {type: "string"}}}},
            content: {type: ["array", "null"], items: {type: "object", required: ["type", "text"], properties: {type: {const: "reasoning_text"}, text: {type: "string"}}}},
            encrypted_content: {type: ["string", "null"]}
        }}),
        whenType(["additional_tools"], {required: ["tools"], properties: {tools: {type: "array", items: tool}}}),
        // An item of a stored response, by its id (the AI SDK's OpenAI provider sends its reasoning items so).
        whenType(["item_reference"], {required: ["id"], properties: {id: nonEmpty}})
    ]
};

const toolChoice = {
    type: ["string", "object"],
    if: {type: "string"},
    then: {enum: ["auto", "none", "required"]},
    else: {
        required: ["type"], properties: {type: nonEmpty},
        allOf: [
            whenType(["function", "custom"], {required: ["name"], properties: {name: nonEmpty}}),
            whenType(["allowed_tools"], {required: ["mode", "tools"], properties: {
                mode: {enum: ["auto", "required"]},
                tools: {type: "array", items: {type: "object", required: ["type"], properties: {type: nonEmpty, name: nonEmpty}}}
            }})
        ]
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
        tools: {type: "array", items: tool},
        tool_choice: toolChoice,
        parallel_tool_calls: {type: ["boolean", "null"]},
        text: {type: "object", properties: {
            format: {type: "object", required: ["type"], properties: {
                type: {enum: ["text", "json_object", "json_schema"]}, name: {type: "string"}, schema: {type: "object"}, strict: {type: ["boolean", "null"]}, description: {type: "string"}
            }},
            verbosity: {enum: ["low", "medium", "high", null]}
        }},
        reasoning: {type: ["object", "null"], properties: {
            effort: {enum: [...reasoningEfforts, null]}, summary: {type: ["string", "null"]}, context: {type: ["string", "null"]}
        }},
        include: {type: ["array", "null"], items: {enum: includables}},
        top_logprobs: {type: ["integer", "null"], minimum: 0, maximum: 5},
        metadata: {type: ["object", "null"], additionalProperties: {type: "string", maxLength: 512}, maxProperties: 16},
        user: {type: "string"},
        store: {type: ["boolean", "null"]},
        previous_response_id: {type: ["string", "null"]},
        prompt_cache_key: {type: ["string", "null"]},
        stream: {type: ["boolean", "null"]}
    }
} as const;
