import { chatCompletionSchema } from "../chatCompletionSchema.js";

/**
 * Characters of text one /v1/tokenize request may hold (`content` or `prompt`): a million, a few hundred thousand
 * tokens, so an answer (with its pieces) stays a few megabytes. A longer text is refused naming its field.
 */
export const maxTokenizeChars = 1_048_576;

/** Token ids one /v1/detokenize request may hold (as many values as a legacy completions body: completionsBodyBounds). */
export const maxDetokenizeTokens = 1_000_000;

const chat = chatCompletionSchema.properties;
const text = {type: "string", maxLength: maxTokenizeChars};

/** JSON schema of a tokenize request (TokenizeRequest); which of its fields go together is checked by toTokenizeInput. */
export const tokenizeSchema = {
    type: "object",
    properties: {
        model: {type: "string", minLength: 1},
        content: text,
        prompt: text,
        messages: chat.messages,
        tools: chat.tools,
        chat_template_kwargs: chat.chat_template_kwargs,
        add_special_tokens: {type: "boolean"},
        add_special: {type: "boolean"},
        parse_special: {type: "boolean"},
        with_pieces: {type: "boolean"},
        add_generation_prompt: {type: "boolean"},
        continue_final_message: {type: "boolean"},
        return_token_strs: {type: ["boolean", "null"]}
    }
} as const;

/** JSON schema of a detokenize request; the ids themselves (integers in the model's vocabulary) are checked against the model. */
export const detokenizeSchema = {
    type: "object",
    required: ["tokens"],
    properties: {
        model: {type: "string", minLength: 1},
        tokens: {type: "array", maxItems: maxDetokenizeTokens}
    }
} as const;
