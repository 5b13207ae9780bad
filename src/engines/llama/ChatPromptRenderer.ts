import { JinjaTemplateChatWrapper, type ChatHistoryItem, type LlamaModel, type Token } from "node-llama-cpp";
import type { ChatTurn } from "../ChatEngine.js";

/**
 * Renders a conversation into prompt tokens.
 *
 * With a chat template in the GGUF (`tokenizer.chat_template`) the template is rendered by
 * node-llama-cpp's Jinja wrapper exactly as written: messages are not merged, and message text is
 * always tokenized as plain text, so a user cannot inject control tokens such as `<|im_start|>`.
 *
 * Without a template (base models such as stories260K) the documented fallback is plain text:
 * the message contents in order, separated by a blank line, after BOS, with no role labels, so
 * such a model simply continues the text it was given.
 */
export class ChatPromptRenderer {
    private readonly wrapper: JinjaTemplateChatWrapper | null;
    readonly usesTemplate: boolean;

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
    }

    render(turns: readonly ChatTurn[]): Token[] {
        // Plain text is tokenized as llama.cpp tokenizes a prompt (SentencePiece space prefix included).
        const tokens = this.wrapper == null
            ? this.model.tokenize(turns.map((turn) => turn.content).join("\n\n"))
            : this.wrapper.generateContextState({chatHistory: toChatHistory(turns)}).contextText.tokenize(this.model.tokenizer);
        // Like llama.cpp: BOS goes first when the model asks for it and the template did not write it.
        const bos = this.model.tokens.bos;
        if (bos != null && this.model.tokens.shouldPrependBosToken && tokens[0] !== bos)
            tokens.unshift(bos);
        return tokens;
    }
}

function toChatHistory(turns: readonly ChatTurn[]): ChatHistoryItem[] {
    const history: ChatHistoryItem[] = turns.map((turn) => {
        switch (turn.role) {
            case "system": return {type: "system", text: turn.content};
            case "user": return {type: "user", text: turn.content};
            case "assistant": return {type: "model", response: [turn.content]};
        }
    });
    // The empty model turn at the end makes the template add the generation prompt.
    history.push({type: "model", response: []});
    return history;
}
