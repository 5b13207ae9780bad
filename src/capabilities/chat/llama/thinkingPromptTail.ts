import { LlamaText } from "node-llama-cpp";
import type { ReasoningFormat } from "../ChatEngine.js";
import type { ReasoningStart } from "./ReasoningPhase.js";
import { tagsOf } from "./text/createReasoningSplitter.js";
import type { ThinkTags } from "./text/ThinkSplitter.js";

/** What the template did with a thinking model's generation prompt. */
export type RenderedThinking = {
    /** The template's own text after the conversation's last text (templateEnding: special tokens as text). */
    text: string;
    /** The template's own settings say the model does not think (templateSettingsOff): it answers at once, with no thought written. */
    settingsOff?: boolean;
};

const harmonyAnalysis = "<|channel|>analysis<|message|>";
const harmonyFinal = "<|channel|>final<|message|>";

/**
 * What the engine writes after a thinking model's rendered prompt, and where its output then starts.
 *
 * Think tags:
 * - thinking off: nothing when the template already wrote a closed (empty) block (Qwen3's
 *   `enable_thinking: false`), else an empty block `<think>\n\n</think>\n\n` (closing one the prompt opened:
 *   DeepSeek-R1's, QwQ's and Qwen3-2507's `<think>\n`);
 * - thinking on, under a grammar (JSON mode, a schema, forced tools): the block is opened, so the model thinks
 *   freely and the grammar applies from the answer on (a grammar from the first token would forbid `<think>`);
 * - thinking on otherwise: an open block stays open; a closed one stays closed (the template switched thinking off
 *   itself); else the model decides whether it thinks (Qwen3, GLM-4.5). What the template writes after a tool's
 *   result is its own (DeepSeek-V3.1's: nothing, and the model answers there; its generation prompt opens a
 *   thought only after a user message).
 *
 * Harmony (after the generation prompt `<|start|>assistant`): thinking off opens the final channel; under a
 * grammar the analysis channel is opened; otherwise the model writes its channels itself.
 */
export function thinkingPromptTail(format: ReasoningFormat, rendered: RenderedThinking, thinking: {enabled: boolean, constrained: boolean}): {tail: string, start: ReasoningStart} {
    const {text} = rendered;
    if (format === "harmony") {
        if (text.endsWith(harmonyAnalysis))
            return thinking.enabled ? {tail: "", start: "reasoning"} : {tail: "<|end|><|start|>assistant" + harmonyFinal, start: "answer"};
        if (!thinking.enabled)
            return {tail: harmonyFinal, start: "answer"};
        return thinking.constrained ? {tail: harmonyAnalysis, start: "reasoning"} : {tail: "", start: "undecided"};
    }
    if (rendered.settingsOff === true)
        return {tail: "", start: "answer"};
    const tags = tagsOf(format);
    const {opening, emptyBlock, closing} = blockShape(format, tags, text);
    const open = opensThought(text, tags);
    if (!thinking.enabled) {
        if (open)
            return {tail: closing, start: "answer"};
        // The generation prompt ends with a closed block: the template switched thinking off itself.
        if (text.trimEnd().endsWith(tags.close))
            return {tail: "", start: "answer"};
        return {tail: emptyBlock, start: "answer"};
    }
    if (open)
        return {tail: "", start: "reasoning"};
    // The generation prompt ends with a closed thought: the template switched thinking off itself (Hy3's default
    // `no_think`), and no grammar reopens one.
    if (text.trimEnd().endsWith(tags.close))
        return {tail: "", start: "answer"};
    if (thinking.constrained)
        return {tail: opening, start: "reasoning"};
    return {tail: "", start: "undecided"};
}

/**
 * How a format's thought is written in a prompt, as its templates write one: what opens it, an empty one, and what closes
 * one the prompt `text` opened. Gemma 4's empty block is `<|channel>thought\n<channel|>`; Mistral's and Hy3's thought has
 * no whitespace around it (`[THINK]...[/THINK]answer`); Apriel's opening sentence ends its line and its template writes
 * a thought as `THOUGHT\n[BEGIN FINAL RESPONSE]\n`; think tags close into Qwen3's empty block `<think>\n\n</think>\n\n`.
 */
function blockShape(format: Exclude<ReasoningFormat, "harmony">, {open, close}: ThinkTags, text: string): {opening: string, emptyBlock: string, closing: string} {
    switch (format) {
        case "gemma4":
            return {opening: open + "\n", emptyBlock: open + "\n" + close, closing: "\n" + close};
        case "mistral": case "hy3":
            return {opening: open, emptyBlock: open + close, closing: close};
        case "apriel":
            return {opening: open, emptyBlock: `${open}\n${close}\n`, closing: `\n${close}\n`};
        default:
            return {opening: open + "\n", emptyBlock: `${open}\n\n${close}\n\n`, closing: text.endsWith(open + "\n") ? `\n${close}\n\n` : `\n\n${close}\n\n`};
    }
}

/**
 * The template's own text after the last text a client wrote (the messages' text is plain text in the rendering, the
 * template's markup special tokens' text): where the template opens or closes a thought for the reply. A client's text
 * never does, whatever tags it quotes (a user asking what `[THINK]` means).
 */
export function templateEnding(rendered: LlamaText): string {
    const values = rendered.values;
    let last = values.length - 1;
    while (last >= 0 && !(typeof values[last] === "string" && values[last] !== ""))
        last--;
    return LlamaText(values.slice(last + 1)).toString();
}

/** What thinkingPromptTail reads of a rendered prompt: the template's ending, and (Mistral's) its own settings. */
export function renderedThinking(rendered: LlamaText, format: ReasoningFormat): RenderedThinking {
    return {text: templateEnding(rendered), settingsOff: format === "mistral" && templateSettingsOff(rendered)};
}

/**
 * The template's own text (not a client's) sets the model's reasoning off: mistral-common's v15 templates write
 * `[MODEL_SETTINGS]{"reasoning_effort": "none"}[/MODEL_SETTINGS]` (their default, and what thinking off passes them),
 * after which the model answers with no thought at all.
 */
function templateSettingsOff(rendered: LlamaText): boolean {
    const own = rendered.values.filter((value) => typeof value !== "string");
    return /\[MODEL_SETTINGS\][^[]*"reasoning_effort":\s*"none"/.test(LlamaText(own).toString());
}

/** The text opens a thought it does not close. */
export function opensThought(text: string, tags: ThinkTags): boolean {
    return text.lastIndexOf(tags.open) > text.lastIndexOf(tags.close);
}
