import { LlamaText, SpecialTokensText, type Token } from "node-llama-cpp";
import type { ChatJob, ChatToolFunction, ChatTurn, ReasoningFormat } from "../ChatEngine.js";
import type { ChatPromptRenderer } from "./ChatPromptRenderer.js";
import type { ReasoningStart } from "./ReasoningPhase.js";
import { opensThought, renderedThinking, templateEnding, thinkingPromptTail } from "./thinkingPromptTail.js";
import { tagsOf } from "./text/createReasoningSplitter.js";

/** What of a job makes its conversation's prompt. */
export type ConversationJob = Pick<ChatJob, "turns" | "templateKwargs" | "reasoning">;

/** A conversation's prompt: its tokens; the template's text (null without a template) and what the engine wrote after it. */
export type ConversationPrompt = {tokens: Token[], start: ReasoningStart, rendered: LlamaText | null, tail: string};

/**
 * A conversation's prompt tokens, and for a thinking model (`format` not null) where its output starts: the
 * template rendered with the job's variables (conversationKwargs), then what thinkingPromptTail writes after it.
 * `constrained`: a grammar will apply to the answer. `callOpening`: a forced call that opens with this text (ToolCallFormat's
 * `forcedOpening`, harmony's): with thinking off, the prompt writes it after the generation prompt in place of a thinking
 * tail and the output starts in the call; with thinking on, the model thinks first (the analysis channel is opened, as
 * under any grammar), and the engine writes the call's opening where the thought ends (TurnPlanner's `closeOn`).
 */
export function conversationPrompt(renderer: ChatPromptRenderer, format: ReasoningFormat | null, job: ConversationJob,
    functions: readonly ChatToolFunction[] | undefined, constrained: boolean, callOpening?: string): ConversationPrompt {
    const kwargs = conversationKwargs(renderer, format, job);
    const thinks = format != null;
    const enabled = job.reasoning?.enabled ?? kwargs.enable_thinking !== false;
    const whole = renderer.renderTemplate(job.turns, functions, kwargs);
    // A conversation that ends with an answer's start (an assistant message without calls: Anthropic's prefill), where
    // the template leaves that message open (the prompt ends with the message's own text, not the template's), is
    // continued: no thinking tail after it, and what comes is answer, or reasoning where the prefill opens a thought
    // it does not close. Where the template closes it (DeepSeek-R1's, Phi-3.5's), it is continued too (continuedPrefill);
    // gpt-oss's is continued in its final channel, where node-llama-cpp's wrapper leaves it open.
    const last = job.turns.at(-1);
    const end = whole?.values.at(-1);
    const prefill = last?.role === "assistant" && last.content.trim() !== "" && (last.toolCalls?.length ?? 0) === 0 ? last : null;
    const continued = prefill != null && typeof end === "string" && end.trimEnd().endsWith(prefill.content.trimEnd());
    // Left open, it ends with its text as the client gave it: node-llama-cpp's wrapper adds whitespace of its own after a
    // template that writes the text trimmed (Gemma 2's, Mistral-Nemo's: `The cat\n\n`), a paragraph's end to the model.
    const rendered = continued ? cutAfterPrefill(whole!, prefill) : whole;
    if (prefill != null && rendered != null && !continued && format !== "harmony") {
        const closedPrefill = continuedPrefill(renderer, format, job, functions, kwargs, prefill, rendered);
        if (closedPrefill != null)
            return closedPrefill;
    }
    if (!thinks || rendered == null || continued) {
        const start: ReasoningStart = !thinks ? "answer" : !continued ? "undecided"
            : format !== "harmony" && opensThought(last!.content, tagsOf(format)) ? "reasoning" : "answer";
        return {tokens: renderer.tokensOf(rendered, job.turns), start, rendered, tail: ""};
    }
    if (callOpening != null && !enabled)
        return {tokens: renderer.tokensOf(rendered, job.turns, callOpening), start: "call", rendered, tail: callOpening};
    const {tail, start} = thinkingPromptTail(format, renderedThinking(rendered, format), {enabled, constrained});
    return {tokens: renderer.tokensOf(rendered, job.turns, tail), start, rendered, tail};
}

/**
 * The template variables a job renders with: its `chat_template_kwargs`, and for a thinking model thinking off as
 * `enable_thinking: false` where the template has that switch, the effort asked for as `reasoning_effort` where it
 * reads one (gpt-oss's "Reasoning: low|medium|high"), the thought's budget as `thinking_budget` where it reads one
 * (Seed-OSS's: 0 with thinking off, where the template closes the thought itself; else the budget's tokens, which the
 * template tells the model, as ByteDance documents the variable).
 */
export function conversationKwargs(renderer: ChatPromptRenderer, format: ReasoningFormat | null, job: ConversationJob): Record<string, unknown> {
    const kwargs = {...job.templateKwargs};
    const thinks = format != null;
    const enabled = job.reasoning?.enabled ?? kwargs.enable_thinking !== false;
    if (thinks && !enabled && renderer.hasThinkingSwitch)
        kwargs.enable_thinking = false;
    const effort = job.reasoning?.effort;
    if (thinks && renderer.hasEffortVariable && kwargs.reasoning_effort == null) {
        const values = renderer.effortValues;
        if (values == null) {
            if (effort != null)
                kwargs.reasoning_effort = ["low", "medium", "high"].includes(effort) ? effort : "high";
        } else if (job.reasoning != null) {
            // A template that refuses other values (mistral-common's v15: none/high) gets the nearest it takes: thinking off
            // as its own off value, an effort it does not name as its highest; a request that says nothing, its default.
            const off = values.find((value) => ["none", "no_think", "minimal", "off"].includes(value));
            const on = values.filter((value) => value !== off);
            const chosen = !enabled ? off : effort != null && on.includes(effort) ? effort : on.includes("high") ? "high" : on.at(-1);
            if (chosen != null)
                kwargs.reasoning_effort = chosen;
        }
    }
    const budget = !enabled ? 0 : job.reasoning?.budgetTokens;
    if (thinks && budget != null && renderer.hasBudgetVariable && kwargs.thinking_budget == null)
        kwargs.thinking_budget = budget;
    return kwargs;
}

/**
 * A prefill the template closes (its end-of-message markup after the text), continued. Where the generation prompt
 * opens a thought this server reads (DeepSeek-R1's `<｜Assistant｜><think>\n`), as llama-server continues one: the
 * messages before it with the generation prompt up to the thought's opening tag, the reasoning the client gave the
 * prefill, the closing tag, then the text (`<think></think>Hello`). Elsewhere the template's own rendering of the
 * whole conversation, cut after the prefill's text (what transformers' `continue_final_message` does), so a template's
 * own markup before an answer stays (Command-R7B's `<|START_RESPONSE|>`, Kimi-K3's response channel). What comes is
 * answer, or reasoning where the text opens a thought it does not close. Null where neither applies.
 */
function continuedPrefill(renderer: ChatPromptRenderer, format: ReasoningFormat | null, job: ConversationJob,
    functions: readonly ChatToolFunction[] | undefined, kwargs: Record<string, unknown>, prefill: ChatTurn, rendered: LlamaText): ConversationPrompt | null {
    const tags = format == null || format === "harmony" ? null : tagsOf(format);
    const start: ReasoningStart = tags != null && opensThought(prefill.content, tags) ? "reasoning" : "answer";
    const before = tags == null ? null : renderer.renderTemplate(job.turns.slice(0, -1), functions, kwargs);
    let continued: LlamaText | null = null;
    if (before != null && tags != null && opensThought(templateEnding(before), tags)) {
        const values = [...before.values];
        const lastValue = values.at(-1);
        // The generation prompt up to its opening tag (llama.cpp writes the reasoning right after the tag).
        if (lastValue instanceof SpecialTokensText && lastValue.value.trimEnd().endsWith(tags.open))
            values[values.length - 1] = new SpecialTokensText(lastValue.value.trimEnd());
        continued = LlamaText([...values, prefill.reasoning ?? "", new SpecialTokensText(tags.close), prefill.content]);
    } else
        continued = cutAfterPrefill(rendered, prefill);
    return continued == null ? null : {tokens: renderer.tokensOf(continued, job.turns), start, rendered: continued, tail: ""};
}

/** The rendering cut after the prefill's text (its last plain text that ends with it), the client's trailing whitespace kept; null where it is not there. */
function cutAfterPrefill(rendered: LlamaText, prefill: ChatTurn): LlamaText | null {
    const text = prefill.content.trimEnd();
    const values = rendered.values;
    const at = values.findLastIndex((value) => typeof value === "string" && value.trimEnd().endsWith(text));
    if (at < 0)
        return null;
    const kept = (values[at] as string).trimEnd();
    return LlamaText([...values.slice(0, at), kept + prefill.content.slice(text.length)]);
}
