import type { ChatRunHooks, ChoiceResult, ReasoningFormat, TokenLogprob, ToolCallFormat } from "../ChatEngine.js";
import type { ChoiceOutcome } from "./generateChoice.js";
import { parseToolCalls, type ArgumentsReader } from "./parseToolCalls.js";
import { ReasoningOutput } from "./text/ReasoningOutput.js";
import { thoughtEndingCallStarts } from "./text/createReasoningSplitter.js";
import type { ReasoningStart } from "./text/ReasoningSplitter.js";
import { ToolCallStream } from "./ToolCallStream.js";

/**
 * What a request's choices are parsed for: calls in the template's format, to these functions, their arguments read
 * by `read` (parseToolCalls.ts argumentsReader); `forced`: a grammar makes them.
 */
export type ToolCallPlan = {format: ToolCallFormat, names: ReadonlySet<string>, forced: boolean, read: ArgumentsReader};

/**
 * What one choice's generated text becomes: pieces handed to the run's hooks as they come (a thinking model's
 * reasoning apart; the answer through the call parser when streaming with tools), and the choice's result at
 * the end (the answer's calls parsed out, its reasoning and logprobs apart).
 */
export class ChoiceOutput {
    /** Streaming with tools: logprobs entries wait for whatever the call parser hands out next. */
    private readonly entries: TokenLogprob[] = [];
    private readonly toolStream: ToolCallStream | null;
    private readonly split: ReasoningOutput;

    /** `reasoning`: a thinking model's format and where its output starts (the prompt may have opened the reasoning or a call); null otherwise. */
    constructor(
        private readonly index: number,
        private readonly hooks: ChatRunHooks,
        private readonly calls: ToolCallPlan | null,
        reasoning: {format: ReasoningFormat, start: ReasoningStart} | null,
        private readonly logprobs: boolean
    ) {
        this.toolStream = calls == null || (hooks.onText == null && hooks.onToolCall == null)
            ? null
            : new ToolCallStream(calls.format, calls.names, !calls.forced, (event) => event.type === "content"
                ? hooks.onText?.(index, event.text, this.takeEntries())
                : hooks.onToolCall?.(index, event, this.takeEntries()), calls.read);
        // The answer goes to the call parser (streaming with tools) or out; a thinking model's reasoning apart
        // (its tokens' logprobs entries are not reported: only the answer's are).
        this.split = new ReasoningOutput(reasoning?.format ?? null, reasoning?.start ?? "answer", {
            reasoning: (text) => hooks.onReasoning?.(index, text),
            content: (text, entries) => {
                if (this.toolStream == null)
                    hooks.onText?.(index, text, entries);
                else {
                    this.entries.push(...entries ?? []);
                    this.toolStream.push(text);
                }
            }
        }, calls != null, calls == null || calls.forced ? [] : thoughtEndingCallStarts(calls.format));
    }

    /** Generated text that is final (no partial stop sequence), with its tokens' logprobs entries. */
    push(text: string, logprobs?: TokenLogprob[]) {
        this.split.push(text, logprobs);
    }

    /** Once the choice is generated: what was held back goes out, and the choice's result. */
    finish(outcome: ChoiceOutcome): ChoiceResult {
        const {index} = this;
        const answer = this.split.finish(outcome.finishReason === "stop");
        if (this.toolStream != null) {
            this.toolStream.finish();
            if (this.entries.length > 0)
                this.hooks.onText?.(index, "", this.takeEntries());
        }
        // Forced calls are well-formed by grammar, so they can only be cut short (token limit, stop sequence).
        const calls = this.calls == null ? null : parseToolCalls(answer.content, this.calls.format, this.calls.names, this.calls.forced, this.calls.read);
        // The answer apart from a thinking model's reasoning; calls are looked for in the answer only.
        const {reasoningTokens, ...generated} = outcome;
        const thought = answer.reasoning === undefined ? {} : {reasoning: answer.reasoning, reasoningTokens: reasoningTokens ?? 0};
        // A thinking model's logprobs are its answer's.
        if (answer.reasoning !== undefined && answer.logprobs != null)
            generated.logprobs = answer.logprobs;
        if (calls == null)
            return {index, ...generated, text: answer.content, ...thought};
        if (calls.calls.length === 0)
            return {index, ...generated, text: calls.content, ...thought};
        return {
            index, ...generated, text: calls.content, toolCalls: calls.calls, ...thought,
            finishReason: calls.complete && outcome.finishReason !== "length" ? "tool_calls" : outcome.finishReason
        };
    }

    private takeEntries() {
        return this.logprobs ? this.entries.splice(0) : undefined;
    }
}
