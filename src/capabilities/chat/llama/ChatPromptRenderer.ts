import {
    JinjaTemplateChatWrapper, LlamaText, SpecialTokensText,
    type ChatHistoryItem, type ChatModelFunctions, type ChatModelResponse, type LlamaModel, type Token
} from "node-llama-cpp";
import type { ChatToolFunction, ChatTurn, ToolCallFormat } from "../ChatEngine.js";

type JinjaWrapperInternals = {_stringifyFunctionResult?: boolean};

/**
 * Renders a conversation into prompt tokens.
 *
 * With a chat template in the GGUF (`tokenizer.chat_template`) the template is rendered by
 * node-llama-cpp's Jinja wrapper exactly as written: messages are not merged, and message text is
 * always tokenized as plain text, so a user cannot inject control tokens such as `<|im_start|>`.
 *
 * Tools: when node-llama-cpp recognises the template's tool-call format (Qwen2.5/Hermes-style
 * templates that render `tools`, assistant `tool_calls` and `tool` messages), the functions go to
 * the template as its `tools`, earlier calls as the assistant's `tool_calls` and their results as
 * `tool` messages, all rendered by the template itself. `toolCallFormat` is that format (null when
 * the template has no tool support).
 *
 * Without a template (base models such as stories260K) the documented fallback is plain text:
 * the message contents in order, separated by a blank line, after BOS, with no role labels, so
 * such a model simply continues the text it was given.
 */
export class ChatPromptRenderer {
    private readonly wrapper: JinjaTemplateChatWrapper | null;
    readonly usesTemplate: boolean;
    readonly toolCallFormat: ToolCallFormat | null;

    constructor(private readonly model: LlamaModel) {
        const template = model.fileInfo.metadata.tokenizer?.chat_template;
        this.wrapper = typeof template === "string" && template.trim() !== ""
            ? new JinjaTemplateChatWrapper({
                template,
                tokenizer: model.tokenizer,
                joinAdjacentMessagesOfTheSameType: false,
                convertUnsupportedSystemMessagesToUserMessages: "auto"
            })
            : null;
        this.usesTemplate = this.wrapper != null;
        this.toolCallFormat = this.wrapper?.usingJinjaFunctionCallTemplate === true ? toolCallFormatOf(this.wrapper) : null;
        if (this.toolCallFormat != null) {
            // OpenAI tool results are strings and go into the template as they are; node-llama-cpp
            // would JSON-encode them again (`"sunny"` instead of `sunny`).
            const internals = this.wrapper as unknown as JinjaWrapperInternals;
            if (typeof internals._stringifyFunctionResult !== "boolean")
                throw new Error("This node-llama-cpp version has no JinjaTemplateChatWrapper._stringifyFunctionResult; tool results need updating.");
            internals._stringifyFunctionResult = false;
        }
    }

    render(turns: readonly ChatTurn[], functions?: readonly ChatToolFunction[]): Token[] {
        // Plain text is tokenized as llama.cpp tokenizes a prompt (SentencePiece space prefix included).
        const tokens = this.renderTemplate(turns, functions)?.tokenize(this.model.tokenizer)
            ?? this.model.tokenize(turns.map((turn) => turn.content).join("\n\n"));
        // Like llama.cpp: BOS goes first when the model asks for it and the template did not write it.
        const bos = this.model.tokens.bos;
        if (bos != null && this.model.tokens.shouldPrependBosToken && tokens[0] !== bos)
            tokens.unshift(bos);
        return tokens;
    }

    /** The conversation as the template renders it (special tokens marked as such); null without a template. */
    renderTemplate(turns: readonly ChatTurn[], functions?: readonly ChatToolFunction[]): LlamaText | null {
        return this.wrapper?.generateContextState({
            chatHistory: toChatHistory(turns),
            availableFunctions: functions == null || functions.length === 0 || this.toolCallFormat == null ? undefined : toModelFunctions(functions)
        }).contextText ?? null;
    }
}

function toModelFunctions(functions: readonly ChatToolFunction[]): ChatModelFunctions {
    return Object.fromEntries(functions.map((fn) => [fn.name, {
        ...(fn.description == null ? {} : {description: fn.description}),
        params: fn.parameters as never
    }]));
}

function toChatHistory(turns: readonly ChatTurn[]): ChatHistoryItem[] {
    const history: ChatHistoryItem[] = [];
    // An assistant turn right after one with tool calls (and their results) continues that response.
    let openResponse: ChatModelResponse | null = null;
    for (const turn of turns) {
        if (turn.role !== "assistant") {
            openResponse = null;
            history.push({type: turn.role, text: turn.content});
            continue;
        }
        // An empty text before calls is left out: the template would see a (truthy) placeholder for it.
        const items: ChatModelResponse["response"] = turn.content === "" && (openResponse != null || (turn.toolCalls?.length ?? 0) > 0)
            ? []
            : [turn.content];
        turn.toolCalls?.forEach((call, index) => items.push({
            type: "functionCall", name: call.name, params: call.arguments, result: call.result, startsNewChunk: index === 0
        }));
        if (openResponse != null)
            openResponse.response.push(...items);
        else
            history.push({type: "model", response: items});
        openResponse = turn.toolCalls != null && turn.toolCalls.length > 0 ? history.at(-1) as ChatModelResponse : null;
    }
    // The empty model turn at the end makes the template add the generation prompt; after tool
    // results the open response is continued instead (its empty tail is the generation prompt).
    if (openResponse == null)
        history.push({type: "model", response: []});
    return history;
}

function toolCallFormatOf(wrapper: JinjaTemplateChatWrapper): ToolCallFormat | null {
    const {call, parallelism} = wrapper.settings.functions;
    const texts = [call.prefix, call.paramsPrefix, call.suffix, parallelism?.call.betweenCalls ?? ""].map(plainText);
    if (texts.some((text) => text == null) || texts[0] === "")
        return null;
    const [prefix, paramsPrefix, suffix, betweenCalls] = texts as string[];
    return {prefix, paramsPrefix, suffix, betweenCalls};
}

/** The text of a format piece, or null when it holds a special token that is not plain text (BOS, EOS...). */
function plainText(value: unknown): string | null {
    let text = "";
    for (const item of LlamaText(value as never).values) {
        if (typeof item === "string")
            text += item;
        else if (item instanceof SpecialTokensText)
            text += item.value;
        else
            return null;
    }
    return text;
}
