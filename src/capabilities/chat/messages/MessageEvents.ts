import type { ChatRun, ChoiceResult, ToolCallEvent } from "../ChatEngine.js";
import type { Send, TurnStream } from "../turn/runChatTurn.js";
import type { JobDone } from "../turn/runJob.js";
import { finishedMessage, foldMessageEvent, type MessageSnapshot } from "./foldMessageEvent.js";
import { promptUsage, thinkingSignature, toStopReason, toUsage, toolUseId } from "./messageFields.js";
import type { ContentBlock, Message, MessageStreamEvent, PromptUsage } from "./MessagesWire.js";

/**
 * A Message's stream: MessageEvents, made once the engine took the job (`message_start` carries its prompt tokens; its
 * hooks come after). `finish` returns the Message the events fold to (foldMessageEvent): the body when not streamed.
 */
export function messageStream(message: {id: string, model: string}, omitted: boolean) {
    return (send: Send): TurnStream<JobDone> => {
        let events: MessageEvents | undefined;
        return {
            hooks: () => ({
                onPromptCache: (_index, cached) => events!.start(cached),
                onReasoning: (_index, text) => events!.reasoning(text),
                onText: (_index, text) => events!.text(text),
                onToolCall: (_index, event) => events!.toolCall(event)
            }),
            taken: (run) => events = new MessageEvents(send, {...message, promptTokens: (run as ChatRun).promptTokens}, omitted),
            finish: ({choices}) => events!.finish(choices[0])
        };
    };
}

/**
 * One streamed Message as Anthropic's events, in Anthropic's order: `message_start` (with the prompt's usage)
 * and a `ping`, then per block `content_block_start`, its deltas (`thinking_delta` then one `signature_delta`,
 * `text_delta`, `input_json_delta`) and `content_block_stop`, then `message_delta` (stop reason, usage) and
 * `message_stop`. Blocks in order: a thinking model's thinking, at most one text block, one tool_use block per
 * call. `message_start` goes out once the engine says how much of the prompt its cache serves (so its usage is
 * the usage `message_delta` and the Message report too), or with the first content if it never says. Each event is
 * folded as it goes out (foldMessageEvent), into the Message `finish` returns.
 */
class MessageEvents {
    private open: {index: number, type: ContentBlock["type"]} | null = null;
    private blocks = 0;
    private calls = 0;
    private thought = "";
    private prompt: PromptUsage | null = null;
    private folded: MessageSnapshot | undefined;

    /** `omitted`: thinking blocks carry no text (their signature still comes), as Anthropic's `display: "omitted"`. */
    constructor(private readonly stream: Send, private readonly message: {id: string, model: string, promptTokens: number}, private readonly omitted: boolean) {}

    /** `message_start` and a `ping`, once, with the prompt's usage as the prompt cache left it. */
    start(cachedPromptTokens: number) {
        if (this.prompt != null)
            return;
        this.prompt = promptUsage(this.message.promptTokens, cachedPromptTokens);
        this.send({type: "message_start", message: {
            id: this.message.id, type: "message", role: "assistant", model: this.message.model, content: [], stop_reason: null, stop_sequence: null,
            usage: {...this.prompt, output_tokens: 0}
        }});
        this.send({type: "ping"});
    }

    reasoning(text: string) {
        this.startBlock("thinking", {type: "thinking", thinking: "", signature: ""});
        this.thought += text;
        if (!this.omitted)
            this.send({type: "content_block_delta", index: this.open!.index, delta: {type: "thinking_delta", thinking: text}});
    }

    text(text: string) {
        if (text === "")
            return;
        this.startBlock("text", {type: "text", text: ""});
        this.send({type: "content_block_delta", index: this.open!.index, delta: {type: "text_delta", text}});
    }

    toolCall(event: ToolCallEvent) {
        if (event.type === "call") {
            this.closeBlock();
            this.startBlock("tool_use", {type: "tool_use", id: toolUseId(this.message.id, this.calls++), name: event.name, input: {}});
        } else if (this.open != null && event.fragment !== "")
            this.send({type: "content_block_delta", index: this.open.index, delta: {type: "input_json_delta", partial_json: event.fragment}});
    }

    /** The last events (an empty answer is still one, empty, text block); returns the Message they fold to. */
    finish(choice: ChoiceResult): Message {
        this.start(0);
        if (this.blocks === 0 || (this.blocks === 1 && this.thought !== ""))
            this.startBlock("text", {type: "text", text: ""});
        this.closeBlock();
        this.send({type: "message_delta", delta: {stop_reason: toStopReason(choice), stop_sequence: choice.stopSequence ?? null}, usage: toUsage(this.prompt!, choice)});
        this.send({type: "message_stop"});
        return finishedMessage(this.folded!);
    }

    /** Opens a block of `type` unless one of that type is open (toolCall closes the last block first: each call is a block). */
    private startBlock(type: ContentBlock["type"], contentBlock: ContentBlock) {
        this.start(0);
        if (this.open?.type === type)
            return;
        this.closeBlock();
        this.open = {index: this.blocks++, type};
        this.send({type: "content_block_start", index: this.open.index, content_block: contentBlock});
    }

    private closeBlock() {
        if (this.open?.type === "thinking")
            this.send({type: "content_block_delta", index: this.open.index, delta: {type: "signature_delta", signature: thinkingSignature(this.thought.trim())}});
        if (this.open != null)
            this.send({type: "content_block_stop", index: this.open.index});
        this.open = null;
    }

    /** The event out, and into the Message. */
    private send(event: MessageStreamEvent) {
        this.folded = foldMessageEvent(this.folded, event);
        this.stream(event, event.type);
    }
}
