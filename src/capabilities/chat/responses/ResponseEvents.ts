import type { TokenLogprob, ToolCallEvent } from "../ChatEngine.js";
import { toOutputLogprobs, toReasoningItem, type OutputOptions, type ResponseIds } from "./toResponse.js";
import type { OutputCustomToolCall, OutputFunctionCall, OutputItem, ResponseObject, WrittenOutputText } from "./ResponsesWire.js";
import type { Send as SendEvent, TurnStream } from "../turn/runChatTurn.js";
import type { JobDone } from "../turn/runJob.js";

type Send = (type: string, data: Record<string, unknown>) => void;

/**
 * A response's stream: `response.created` and `response.in_progress` with `base` once the engine took the job, the
 * output's events (ResponseEvents), then `response.completed` (or `.incomplete`) with the `finished` response; every
 * event numbered (`sequence_number`). A failure after the headers is OpenAI's `response.failed`, the response with its error.
 */
export function responseStream(base: ResponseObject, ids: ResponseIds, options: OutputOptions, finished: (done: JobDone) => ResponseObject) {
    return (sendEvent: SendEvent): TurnStream<JobDone> => {
        let sequence = 0;
        const send: Send = (type, data) => sendEvent({type, sequence_number: sequence++, ...data}, type);
        const events = new ResponseEvents(send, ids, options);
        return {
            hooks: () => ({
                onReasoning: (_index, text) => events.reasoningDelta(text),
                onText: (_index, text, logprobs) => events.textDelta(text, logprobs),
                onToolCall: (_index, event) => events.toolCall(event)
            }),
            taken: () => {
                send("response.created", {response: base});
                send("response.in_progress", {response: base});
            },
            finish: (done) => {
                const response = finished(done);
                events.finish(response.output);
                send(response.status === "incomplete" ? "response.incomplete" : "response.completed", {response});
            },
            failure: {
                event: "response.failed",
                body: (error) => ({type: "response.failed", sequence_number: sequence++, response: {...base, status: "failed", error: {code: "server_error", message: error.message}}})
            }
        };
    };
}

/**
 * The streamed events of one response's output, in OpenAI's order: each item's `output_item.added` when the engine
 * starts it (reasoning, text, a call), its deltas as they come, and when the choice is done (`finish`) each item's
 * closing events and `output_item.done` with the item as the response has it. A custom tool call's input is sent as one
 * `custom_tool_call_input.delta` when it is complete (the model writes it as JSON arguments, decoded at the end).
 */
export class ResponseEvents {
    private outputIndex = 0;
    private message: {index: number} | null = null;
    private reasoning: {index: number} | null = null;
    private readonly calls = new Map<number, {index: number, id: string, kind: "function" | "custom"}>();

    constructor(private readonly send: Send, private readonly ids: ResponseIds, private readonly options: OutputOptions) {}

    reasoningDelta(text: string) {
        if (this.reasoning == null) {
            this.reasoning = {index: this.outputIndex++};
            const at = {item_id: this.ids.reasoning, output_index: this.reasoning.index};
            this.send("response.output_item.added", {output_index: at.output_index, item: {type: "reasoning", id: this.ids.reasoning, summary: [], content: [], status: "in_progress"}});
            this.send("response.reasoning_summary_part.added", {...at, summary_index: 0, part: {type: "summary_text", text: ""}});
            this.send("response.content_part.added", {...at, content_index: 0, part: {type: "reasoning_text", text: ""}});
        }
        const at = {item_id: this.ids.reasoning, output_index: this.reasoning.index};
        this.send("response.reasoning_summary_text.delta", {...at, summary_index: 0, delta: text});
        this.send("response.reasoning_text.delta", {...at, content_index: 0, delta: text});
    }

    /** Answer text, with its tokens' logprobs when asked for (a token may have no text of its own). */
    textDelta(text: string, logprobs?: readonly TokenLogprob[]) {
        const entries = this.options.logprobs ? toOutputLogprobs(logprobs) : [];
        if (text === "" && entries.length === 0)
            return;
        const index = this.openMessage();
        this.send("response.output_text.delta", {item_id: this.ids.message, output_index: index, content_index: 0, delta: text, logprobs: entries});
    }

    toolCall(event: ToolCallEvent) {
        if (event.type === "call") {
            const identity = this.options.tools.get(event.name);
            const kind = identity?.kind ?? "function";
            const {id, callId} = this.ids.call(event.index, kind);
            const call = {index: this.outputIndex++, id, kind};
            this.calls.set(event.index, call);
            const namespace = identity?.namespace != null ? {namespace: identity.namespace} : {};
            const name = identity?.name ?? event.name;
            const item: OutputFunctionCall | OutputCustomToolCall = kind === "custom"
                ? {type: "custom_tool_call", id, call_id: callId, name, ...namespace, input: "", status: "in_progress"}
                : {type: "function_call", id, call_id: callId, name, ...namespace, arguments: "", status: "in_progress"};
            this.send("response.output_item.added", {output_index: call.index, item});
            return;
        }
        const call = this.calls.get(event.index);
        if (call == null || event.fragment === "" || call.kind === "custom")
            return;
        this.send("response.function_call_arguments.delta", {item_id: call.id, output_index: call.index, delta: event.fragment});
    }

    /** The closing events of every output item, in order, each with the item as `output` has it. */
    finish(output: readonly OutputItem[]) {
        if (this.reasoning != null && !output.some((item) => item.type === "reasoning"))
            // Reasoning that was only whitespace: its item still closes, with its text.
            output = [toReasoningItem(this.ids.reasoning, "", "completed", this.options.encryptedReasoning), ...output];
        for (const item of output) {
            if (item.type === "reasoning") {
                const at = {item_id: item.id, output_index: this.reasoning?.index ?? this.outputIndex++};
                this.send("response.reasoning_text.done", {...at, content_index: 0, text: item.content[0].text});
                this.send("response.content_part.done", {...at, content_index: 0, part: item.content[0]});
                this.send("response.reasoning_summary_text.done", {...at, summary_index: 0, text: item.summary[0].text});
                this.send("response.reasoning_summary_part.done", {...at, summary_index: 0, part: item.summary[0]});
                this.send("response.output_item.done", {output_index: at.output_index, item});
            } else if (item.type === "message") {
                const at = {item_id: item.id, output_index: this.openMessage(), content_index: 0};
                const part = item.content[0];
                this.send("response.output_text.done", {...at, text: part.text, logprobs: part.logprobs ?? []});
                this.send("response.content_part.done", {...at, part});
                this.send("response.output_item.done", {output_index: at.output_index, item});
            } else {
                const at = {item_id: item.id, output_index: [...this.calls.values()].find((call) => call.id === item.id)?.index ?? this.outputIndex++};
                if (item.type === "custom_tool_call") {
                    if (item.input !== "")
                        this.send("response.custom_tool_call_input.delta", {...at, delta: item.input});
                    this.send("response.custom_tool_call_input.done", {...at, input: item.input});
                } else
                    this.send("response.function_call_arguments.done", {...at, name: item.name, arguments: item.arguments});
                this.send("response.output_item.done", {output_index: at.output_index, item});
            }
        }
    }

    private openMessage(): number {
        if (this.message == null) {
            this.message = {index: this.outputIndex++};
            const part: WrittenOutputText = {type: "output_text", text: "", annotations: [], logprobs: []};
            this.send("response.output_item.added", {output_index: this.message.index, item: {type: "message", id: this.ids.message, status: "in_progress", role: "assistant", content: []}});
            this.send("response.content_part.added", {item_id: this.ids.message, output_index: this.message.index, content_index: 0, part});
        }
        return this.message.index;
    }
}
