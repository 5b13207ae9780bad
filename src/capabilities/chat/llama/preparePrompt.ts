import type { LlamaModel, Token } from "node-llama-cpp";
import type { ChatToolFunction, RawPrompt, ReasoningFormat } from "../ChatEngine.js";
import type { ChatPromptRenderer } from "./ChatPromptRenderer.js";
import { conversationPrompt, type ConversationJob } from "./conversationPrompt.js";
import { rawPromptTokens } from "./rawPromptTokens.js";
import { textTokens } from "./textTokens.js";
import type { ReasoningStart } from "./ReasoningPhase.js";

/**
 * What a prompt is made of (plain data: the render thread is sent it): a conversation the template renders, a raw
 * prompt, or text as /v1/tokenize tokenizes it (textTokens).
 */
export type PromptRequest =
    | {kind: "conversation", job: ConversationJob, format: ReasoningFormat | null, functions?: readonly ChatToolFunction[], constrained: boolean, callOpening?: string}
    | {kind: "raw", rawPrompt: RawPrompt}
    | TextRequest;

/** Text tokenized as llama.cpp's tokenizer does (llama-server's /tokenize): BOS and EOS added or not, special-token text parsed or not. */
export type TextRequest = {kind: "text", text: string, addSpecial: boolean, parseSpecial: boolean};

/** A prompt's tokens; where a thinking model's output starts; where a raw prompt's own tokens start (after a BOS the server put first). */
export type PreparedPrompt = {tokens: Token[], start: ReasoningStart, clientStart: number};

/** The prompt's tokens, by the same code on the main thread and in the render thread (promptRenderThreadMain). */
export function preparePrompt(model: LlamaModel, renderer: ChatPromptRenderer, request: PromptRequest): PreparedPrompt {
    if (request.kind === "raw")
        return {...rawPromptTokens(model, request.rawPrompt), start: "answer"};
    if (request.kind === "text")
        return {tokens: textTokens(model, renderer.tokenizer, request), start: "answer", clientStart: 0};
    const {tokens, start} = conversationPrompt(renderer, request.format, request.job, request.functions, request.constrained, request.callOpening);
    return {tokens, start, clientStart: 0};
}
