import { LlamaText, SpecialTokensText, type LlamaModel, type LlamaTextValue, type Token } from "node-llama-cpp";
import type { ChatTurn, ReasoningFormat } from "../ChatEngine.js";
import type { ChatPromptRenderer } from "./ChatPromptRenderer.js";
import { conversationKwargs } from "./conversationPrompt.js";
import { isSmallPrompt } from "./isSmallPrompt.js";
import { renderedThinking, thinkingPromptTail } from "./thinkingPromptTail.js";

/** Stands for a question's text while the template renders the conversation once (never in a client's text: it holds control characters). */
const questionSlot = "\u0001question\u0002";

/** A decision job's prompt: the input's tokens (the shared prefix) and what each question's text is followed by. */
export type DecisionPrompt = {prefix: Token[], suffixOf: (questionText: string) => Token[]};

/**
 * The input rendered once through the model's chat template, with the question at the end of its last user turn (after a
 * blank line; a user turn of its own when the input ends otherwise) and thinking off
 * (the template's switch, or an empty think block after the generation prompt: a reasoning model answers at once). The
 * text is cut where the question goes: before it, the shared prefix every question's sequence keeps; after it, the
 * end of the user turn and the generation prompt, which follow each question's text. Without a template (a base model)
 * the turns' text, a blank line, the question and a line break.
 */
export function decisionPrompt(model: LlamaModel, renderer: ChatPromptRenderer, format: ReasoningFormat | null, input: readonly ChatTurn[]): DecisionPrompt {
    const turns: ChatTurn[] = input.map((turn) => ({...turn, content: turn.content.replaceAll(questionSlot, "")}));
    // After a user turn, the question closes that turn (templates that want roles to alternate refuse two user turns in a row).
    const last = turns.at(-1);
    if (last?.role === "user" && last.toolCalls == null)
        turns[turns.length - 1] = {...last, content: last.content + "\n\n" + questionSlot};
    else
        turns.push({role: "user", content: questionSlot});
    const job = {turns, reasoning: {enabled: false, budgetTokens: null}};
    const rendered = renderer.renderTemplate(turns, undefined, conversationKwargs(renderer, format, job));
    if (rendered == null) {
        const prefixText = input.map((turn) => turn.content).join("\n\n");
        return {
            prefix: renderer.tokensOf(null, [{role: "user", content: prefixText === "" ? "" : prefixText + "\n\n"}]),
            suffixOf: (questionText) => model.tokenize(questionText + "\n", false, "trimLeadingSpace")
        };
    }
    const tail = format == null ? "" : thinkingPromptTail(format, renderedThinking(rendered, format), {enabled: false, constrained: false}).tail;
    const whole = LlamaText([rendered, new SpecialTokensText(tail)]);
    const [before, after] = cutAt(whole.values, questionSlot);
    const prefix = renderer.tokensOf(LlamaText(before), []);
    return {prefix, suffixOf: (questionText) => LlamaText([questionText, ...after]).tokenize(renderer.tokenizer, "trimLeadingSpace")};
}

/** A decision job's tokens: the shared prefix, and each question text's suffix (what follows the prefix for it). */
export type DecisionTokens = {prefix: Token[], suffixes: Token[][]};

/**
 * The prefix and every question's suffix, by the same code on the main thread (small inputs: isSmallDecision) and in
 * the render thread; `checkpoint` is called between questions (the render thread's cancel flag).
 */
export function decisionTokens(model: LlamaModel, renderer: ChatPromptRenderer, format: ReasoningFormat | null, input: readonly ChatTurn[],
    questionTexts: readonly string[], checkpoint: () => void = () => {}): DecisionTokens {
    const {prefix, suffixOf} = decisionPrompt(model, renderer, format, input);
    return {prefix, suffixes: questionTexts.map((text) => {
        checkpoint();
        return suffixOf(text);
    })};
}

/** Question text the main thread tokenizes itself (as isSmallPrompt's budget: about 0.3 ms per KB). */
const smallQuestionChars = 16 * 1024;

/** Whether a decision job is small enough for the main thread: its input is a small prompt (isSmallPrompt) and its questions' text is short. */
export function isSmallDecision(renderer: ChatPromptRenderer, format: ReasoningFormat | null, input: readonly ChatTurn[], questionTexts: readonly string[]): boolean {
    let chars = 0;
    for (const text of questionTexts)
        if ((chars += text.length) > smallQuestionChars)
            return false;
    return isSmallPrompt({kind: "conversation", job: {turns: [...input], reasoning: {enabled: false, budgetTokens: null}}, format, constrained: false}, renderer);
}

/** The values before and after `slot`, which is in one plain-text value (client text is plain text). */
function cutAt(values: readonly LlamaTextValue[], slot: string): [LlamaTextValue[], LlamaTextValue[]] {
    const index = values.findIndex((value) => typeof value === "string" && value.includes(slot));
    if (index < 0)
        throw new Error("The chat template did not render the question's turn");
    const text = values[index] as string;
    const at = text.indexOf(slot);
    return [
        [...values.slice(0, index), text.slice(0, at)],
        [text.slice(at + slot.length), ...values.slice(index + 1)]
    ];
}
