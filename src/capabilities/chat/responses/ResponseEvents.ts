import type { ChoiceResult, TokenLogprob, ToolCallEvent } from "../ChatEngine.js";
import type { Send as SendEvent, TurnStream } from "../turn/runChatTurn.js";
import type { JobDone } from "../turn/runJob.js";
import { foldResponseEvent } from "./foldResponseEvent.js";
import { customToolInput } from "./offeredTools.js";
import { encryptedContentOf } from "./reasoningContent.js";
import { randomId } from "./responseIds.js";
import type { OutputItem, OutputLogprob, ResponseObject, ResponseStreamEvent } from "./ResponsesWire.js";
import { incompleteDetails, toOutputLogprobs, toUsage, type OutputOptions, type ResponseIds } from "./toResponse.js";

/**
 * A response's stream: `response.created` and `response.in_progress` with `base` once the engine took the job, the
 * output's events (ResponseEvents), then `response.completed` (or `.incomplete`) with the response they fold to, once
 * `completed` has seen it (it stores it); every event numbered (`sequence_number`). A failure after the headers is
 * OpenAI's `response.failed`, the response with its error. `finish` returns the fold: the body when not streamed.
 */
export function responseStream(base: ResponseObject, ids: ResponseIds, options: OutputOptions, completed: (response: ResponseObject) => void) {
    return (sendEvent: SendEvent): TurnStream<JobDone> => {
        let sequence = 0;
        const events = new ResponseEvents(base, ids, options, ({type, ...data}) => sendEvent({type, sequence_number: sequence++, ...data}, type));
        return {
            hooks: () => ({
                onReasoning: (_index, text) => events.reasoningDelta(text),
                onText: (_index, text, logprobs) => events.textDelta(text, logprobs),
                onToolCall: (_index, event) => events.toolCall(event)
            }),
            taken: () => events.start(),
            finish: (done) => events.finish(done, completed),
            failure: {
                event: "response.failed",
                body: (error) => ({type: "response.failed", sequence_number: sequence++, response: {...base, status: "failed", error: {code: "server_error", message: error.message}}})
            }
        };
    };
}

/**
 * The events of one response, in OpenAI's order, and the response they fold to (foldResponseEvent), built as they go
 * out: each item's `output_item.added` when the engine starts it (reasoning, text, a call), its deltas as they come,
 * and when the choice is done (`finish`) each item's closing events, whose text is the choice's (the engine trims the
 * text before a call), and `output_item.done` with the item folded. A custom tool call's input is sent as one
 * `custom_tool_call_input.delta` when it is complete (the model writes it as JSON arguments, decoded at the end).
 */
export class ResponseEvents {
    private response: ResponseObject;
    private message: number | null = null;
    private reasoning: number | null = null;
    /** The output index of each call, by its index among the choice's calls. */
    private readonly calls = new Map<number, number>();
    /**
     * Deltas of an item not started yet, held until it is sure to be in the response (then they go out first, as
     * they came) or dropped: reasoning that is whitespace so far (a model's empty think block is no reasoning),
     * logprobs entries of tokens without text (before any text, or those of a call's tokens at the end).
     */
    private readonly heldReasoning: string[] = [];
    private readonly heldEntries: OutputLogprob[][] = [];
    /** Items whose closing events went out: the reasoning's once the next item began, the others at the end. */
    private readonly closedItems = new Set<number>();
    /** Each reasoning item's text streamed so far (what closes it when the next item begins), by output index. */
    private readonly reasoningTexts = new Map<number, string>();

    constructor(base: ResponseObject, private readonly ids: ResponseIds, private readonly options: OutputOptions, private readonly send: (event: ResponseStreamEvent) => void) {
        this.response = base;
    }

    /** `response.created` and `response.in_progress`, once the engine took the job. */
    start() {
        this.emit({type: "response.created", response: this.response});
        this.emit({type: "response.in_progress", response: this.response});
    }

    /** Reasoning; after the answer began (Gemma 4's late thought blocks, a second analysis), in a reasoning item of its own. */
    reasoningDelta(text: string) {
        const open = this.reasoning != null && !this.closedItems.has(this.reasoning);
        if (!open && text.trim() === "") {
            this.heldReasoning.push(text);
            return;
        }
        for (const delta of [...this.heldReasoning.splice(0), text]) {
            const index = this.openReasoning();
            this.reasoningTexts.set(index, (this.reasoningTexts.get(index) ?? "") + delta);
            const at = {item_id: this.response.output[index].id, output_index: index};
            this.emit({type: "response.reasoning_summary_text.delta", ...at, summary_index: 0, delta});
            this.emit({type: "response.reasoning_text.delta", ...at, content_index: 0, delta});
        }
    }

    /** Answer text, with its tokens' logprobs when asked for (a token may have no text of its own). */
    textDelta(text: string, logprobs?: readonly TokenLogprob[]) {
        const entries = this.options.logprobs ? toOutputLogprobs(logprobs) : [];
        if (text === "" && entries.length === 0)
            return;
        if (text === "" && this.message == null) {
            this.heldEntries.push(entries);
            return;
        }
        this.emit({type: "response.output_text.delta", item_id: this.ids.message, output_index: this.openMessage(), content_index: 0, delta: text, logprobs: entries});
    }

    toolCall(event: ToolCallEvent) {
        if (event.type === "call") {
            const identity = this.options.tools.get(event.name);
            const kind = identity?.kind ?? "function";
            const {id, callId} = this.ids.call(event.index, kind);
            const index = this.nextIndex();
            this.calls.set(event.index, index);
            this.closeReasoningBeforeNext();
            const namespace = identity?.namespace != null ? {namespace: identity.namespace} : {};
            const name = identity?.name ?? event.name;
            const item: OutputItem = kind === "custom"
                ? {type: "custom_tool_call", id, call_id: callId, name, ...namespace, input: "", status: "in_progress"}
                : {type: "function_call", id, call_id: callId, name, ...namespace, arguments: "", status: "in_progress"};
            this.emit({type: "response.output_item.added", output_index: index, item});
            return;
        }
        const index = this.calls.get(event.index);
        const item = index == null ? null : this.response.output[index];
        if (item?.type !== "function_call" || event.fragment === "")
            return;
        this.emit({type: "response.function_call_arguments.delta", item_id: item.id, output_index: index!, delta: event.fragment});
    }

    /**
     * Once the job is done: every item's closing events in order (an item the choice has and its stream did not start,
     * the message of an empty answer, opened and closed after those before it), then `response.completed` (or
     * `.incomplete`) with the response they fold to, which `completed` sees first. Returns that response.
     */
    finish({promptTokens, choices: [choice]}: JobDone, completed: (response: ResponseObject) => void): ResponseObject {
        const calls = choice.toolCalls ?? [];
        let closed = 0;
        const closeOpened = () => {
            while (closed < this.response.output.length)
                this.close(closed++, choice);
        };
        if (choice.reasoning != null && this.reasoning == null)
            this.openReasoning();
        closeOpened();
        if (choice.text !== "" || calls.length === 0)
            this.openMessage();
        closeOpened();
        for (const [index, call] of calls.entries())
            if (!this.calls.has(index)) {
                this.toolCall({type: "call", index, name: call.name});
                closeOpened();
            }
        const status = choice.finishReason === "length" ? "incomplete" : "completed";
        const response: ResponseObject = {...this.response, status, incomplete_details: incompleteDetails(status), usage: toUsage(promptTokens, choice)};
        completed(response);
        this.emit({type: status === "incomplete" ? "response.incomplete" : "response.completed", response});
        return this.response;
    }

    /** One item's closing events, with the choice's final text, arguments or input, and its `output_item.done`. */
    private close(index: number, choice: ChoiceResult) {
        if (this.closedItems.has(index))
            return;
        this.closedItems.add(index);
        const item = this.response.output[index];
        const at = {item_id: item.id, output_index: index};
        const incomplete = choice.finishReason === "length";
        if (item.type === "reasoning") {
            // The choice's reasoning, or where there are several items (reasoning after the answer began) each one's own.
            const several = this.response.output.filter((output) => output.type === "reasoning").length > 1;
            const text = several ? (this.reasoningTexts.get(index) ?? "").trim() : choice.reasoning ?? "";
            // Cut by max_output_tokens before the answer began: the reasoning itself is what is incomplete.
            const cut = incomplete && choice.reasoning != null && choice.text === "" && (choice.toolCalls ?? []).length === 0;
            this.closeReasoning(index, text, cut);
        } else if (item.type === "message") {
            const logprobs = this.options.logprobs ? toOutputLogprobs(choice.logprobs) : [];
            this.emit({type: "response.output_text.done", ...at, content_index: 0, text: choice.text, logprobs});
            this.emit({type: "response.content_part.done", ...at, content_index: 0, part: {...this.itemAt(index, "message").content[0], logprobs}});
            const status = incomplete ? "incomplete" : "completed";
            this.emit({type: "response.output_item.done", output_index: index, item: {...this.itemAt(index, "message"), status}});
        } else {
            const callIndex = [...this.calls].find(([, output]) => output === index)![0];
            const call = choice.toolCalls?.[callIndex];
            // Cut by max_output_tokens while it was being written (its arguments may not even be JSON).
            const cut = incomplete && call?.cut === true;
            if (item.type === "custom_tool_call") {
                const input = call != null ? customToolInput(call.arguments) : item.input;
                if (input !== "")
                    this.emit({type: "response.custom_tool_call_input.delta", ...at, delta: input});
                this.emit({type: "response.custom_tool_call_input.done", ...at, input});
            } else
                this.emit({type: "response.function_call_arguments.done", ...at, name: item.name, arguments: call?.arguments ?? item.arguments});
            const folded = this.response.output[index] as typeof item;
            this.emit({type: "response.output_item.done", output_index: index, item: {...folded, status: cut ? "incomplete" : "completed"}});
        }
    }

    /** The reasoning item's closing events, with its text (`cut`: the generation stopped inside it). */
    private closeReasoning(index: number, text: string, cut: boolean) {
        this.closedItems.add(index);
        const at = {item_id: this.response.output[index].id, output_index: index};
        this.emit({type: "response.reasoning_text.done", ...at, content_index: 0, text});
        this.emit({type: "response.content_part.done", ...at, content_index: 0, part: {type: "reasoning_text", text}});
        this.emit({type: "response.reasoning_summary_text.done", ...at, summary_index: 0, text});
        this.emit({type: "response.reasoning_summary_part.done", ...at, summary_index: 0, part: {type: "summary_text", text}});
        const {status: _, ...folded} = this.itemAt(index, "reasoning");
        const encrypted = this.options.encryptedReasoning ? {encrypted_content: encryptedContentOf(folded.content[0].text)} : {};
        this.emit({type: "response.output_item.done", output_index: index, item: {...folded, ...encrypted, status: cut ? "incomplete" : "completed"}});
    }

    /** An item after the reasoning begins: the reasoning is whole, its item is closed first (each item closes before the next is added, as OpenAI's streams go). */
    private closeReasoningBeforeNext() {
        if (this.reasoning != null && !this.closedItems.has(this.reasoning))
            this.closeReasoning(this.reasoning, (this.reasoningTexts.get(this.reasoning) ?? "").trim(), false);
    }

    /** The open reasoning item's index; a new item when none is open (the first has the response's reasoning id). */
    private openReasoning(): number {
        if (this.reasoning == null || this.closedItems.has(this.reasoning)) {
            const id = this.reasoning == null ? this.ids.reasoning : randomId("rs");
            this.reasoning = this.nextIndex();
            const at = {item_id: id, output_index: this.reasoning};
            this.emit({type: "response.output_item.added", output_index: at.output_index,
                item: {type: "reasoning", id, summary: [], content: [], status: "in_progress"}});
            this.emit({type: "response.reasoning_summary_part.added", ...at, summary_index: 0, part: {type: "summary_text", text: ""}});
            this.emit({type: "response.content_part.added", ...at, content_index: 0, part: {type: "reasoning_text", text: ""}});
        }
        return this.reasoning;
    }

    private openMessage(): number {
        if (this.message == null) {
            this.closeReasoningBeforeNext();
            this.message = this.nextIndex();
            this.emit({type: "response.output_item.added", output_index: this.message,
                item: {type: "message", id: this.ids.message, status: "in_progress", role: "assistant", content: []}});
            this.emit({type: "response.content_part.added", item_id: this.ids.message, output_index: this.message, content_index: 0,
                part: {type: "output_text", text: "", annotations: [], logprobs: []}});
            for (const logprobs of this.heldEntries.splice(0))
                this.emit({type: "response.output_text.delta", item_id: this.ids.message, output_index: this.message, content_index: 0, delta: "", logprobs});
        }
        return this.message;
    }

    private nextIndex() {
        return this.response.output.length;
    }

    private itemAt<Type extends OutputItem["type"]>(index: number, type: Type) {
        return this.response.output[index] as Extract<OutputItem, {type: Type}>;
    }

    /** The event out, and into the response. */
    private emit(event: ResponseStreamEvent) {
        this.response = foldResponseEvent(this.response, event);
        this.send(event);
    }
}
