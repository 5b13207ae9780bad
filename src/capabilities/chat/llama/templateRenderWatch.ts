import type { JinjaTemplateChatWrapper } from "node-llama-cpp";
import { jinjaRendererOf } from "../../../runtimes/llama/internals.js";
import type { TemplateRender } from "./templateGenerationPrompt.js";
import { replyRender, withTurnReasoning, withoutPastReasoningPlaceholders, withCallsInText, withCallsOnlyContent, withNumberedCallIds, withoutEmptyTails, withoutToolNames,
    withReasoningAsBlocks, withReasoningAsThinking } from "./templateMessages.js";
import { callsOnlyContent, trimsCallReasoning } from "./templateProbes.js";

// How ChatPromptRenderer watches and shapes the renders node-llama-cpp's Jinja wrapper makes of a template.

/**
 * A wrapper's template renderer, watched: its last render, and rendering the template without being watched.
 * `replyAsGenerationPrompt`: the next render's last message is the empty reply to come, to be rendered as the template's
 * generation prompt (replyRender).
 */
export type RenderWatch = {last: TemplateRender | null, render: (params: Record<string, unknown>) => string, replyAsGenerationPrompt: boolean,
    /** Per earlier response with calls (not the last): its text after the calls is empty (withoutEmptyTails). */
    emptyTails: boolean[],
    /** Per response with calls, in order: the reasoning the client sent back for it (escaped), to give the template (withTurnReasoning). */
    callReasoning: (string | null)[],
    /** Per answer without calls, in order: the reasoning the client sent back for it (escaped), to give the template (withTurnReasoning). */
    answerReasoning: (string | null)[],
    /** What the template raised (its `raise_exception`) since this was last cleared. */
    refusal: string | null};

/**
 * Records the wrapper's renders of its template (the variables it passes, with the messages' placeholders), and shapes
 * the messages it hands the template: `callIds`, the calls' ids as the model writes them (withNumberedCallIds);
 * `callsText`, a message's calls written into its text, for a template that leaves them out (withCallsInText);
 * `reasoningAs`, a response's reasoning as `thinking` too (LFM2.5's, withReasoningAsThinking) or as a thinking block of its
 * content (Magistral's and Ministral-3's, withReasoningAsBlocks); `toolNames` false,
 * tool results without node-llama-cpp's function name (Kimi-K2's, withoutToolNames).
 */
export function watchRenders(wrapper: JinjaTemplateChatWrapper, {callIds, callsText, reasoningAs, toolNames}:
    {callIds: Parameters<typeof withNumberedCallIds>[1] | null, callsText: Parameters<typeof withCallsInText>[1] | null, reasoningAs: "thinking" | "blocks" | null,
        toolNames: boolean}): RenderWatch {
    const renderer = jinjaRendererOf(wrapper);
    const render = renderer.render.bind(renderer);
    const watch: RenderWatch = {last: null, render, replyAsGenerationPrompt: false, emptyTails: [], callReasoning: [], answerReasoning: [], refusal: null};
    const content = callsOnlyContent(render);
    const trims = trimsCallReasoning(render);
    renderer.render = (received) => {
        const given = callsText == null ? received : withCallsInText(received, callsText);
        const shaped = withoutPastReasoningPlaceholders(withoutEmptyTails(content === undefined ? given : withCallsOnlyContent(given, content), watch.emptyTails));
        const withReasoning = withTurnReasoning(shaped, {calls: watch.callReasoning, answers: watch.answerReasoning}, trims);
        const reasoned = reasoningAs === "thinking" ? withReasoningAsThinking(withReasoning)
            : reasoningAs === "blocks" ? withReasoningAsBlocks(withReasoning) : withReasoning;
        const numbered = callIds != null ? withNumberedCallIds(reasoned, callIds) : reasoned;
        const params = toolNames ? numbered : withoutToolNames(numbered);
        let output: string;
        try {
            output = (watch.replyAsGenerationPrompt ? replyRender(params, render) : null) ?? render(params);
        } catch (error) {
            watch.refusal = templateRefusalOf(error) ?? watch.refusal;
            throw error;
        }
        watch.last = {params, output};
        return output;
    };
    return watch;
}

/** The message of the template's own raise_exception (patches/@huggingface+jinja+0.5.11.patch names its error as transformers does); null for another error. */
export function templateRefusalOf(error: unknown): string | null {
    return error instanceof Error && error.name === "TemplateError" ? error.message : null;
}
