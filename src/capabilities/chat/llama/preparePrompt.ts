import type { LlamaModel, Token } from "node-llama-cpp";
import type { ChatToolFunction, RawPrompt, ReasoningFormat } from "../ChatEngine.js";
import type { ChatPromptRenderer } from "./ChatPromptRenderer.js";
import { conversationPrompt, type ConversationJob } from "./conversationPrompt.js";
import { rawPromptTokens } from "./rawPromptTokens.js";
import type { ReasoningStart } from "./ReasoningPhase.js";

/** What a prompt is made of (plain data: the render thread is sent it): a conversation the template renders, or a raw prompt. */
export type PromptRequest =
    | {kind: "conversation", job: ConversationJob, format: ReasoningFormat | null, functions?: readonly ChatToolFunction[], constrained: boolean}
    | {kind: "raw", rawPrompt: RawPrompt};

/** A prompt's tokens; where a thinking model's output starts; where a raw prompt's own tokens start (after a BOS the server put first). */
export type PreparedPrompt = {tokens: Token[], start: ReasoningStart, clientStart: number};

/** The prompt's tokens, by the same code on the main thread and in the render thread (promptRenderThreadMain). */
export function preparePrompt(model: LlamaModel, renderer: ChatPromptRenderer, request: PromptRequest): PreparedPrompt {
    if (request.kind === "raw")
        return {...rawPromptTokens(model, request.rawPrompt), start: "answer"};
    const {tokens, start} = conversationPrompt(renderer, request.format, request.job, request.functions, request.constrained);
    return {tokens, start, clientStart: 0};
}
