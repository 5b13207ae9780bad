import type { ChatJob, ChoiceResult } from "../../src/capabilities/chat/ChatEngine.js";
import type { LlamaChatEngine } from "../../src/capabilities/chat/llama/LlamaChatEngine.js";

/** The generated speculation models' shape (test/model/speculative.test.ts, draftVerification.test.ts): no chat template. */
export const speculationModelShape = {nEmbd: 64, nHeads: 4, nKvHeads: 2, nFf: 128, contextLength: 1024, chatTemplate: null, weightStorage: "f32"} as const;

/** A raw-prompt job (legacy completions), greedy with seed 1 unless `sampling` says otherwise. */
export function rawPromptJob(prompt: string, extra: Partial<ChatJob> = {}, sampling: Partial<ChatJob["sampling"]> = {}): ChatJob {
    return {
        turns: [], rawPrompt: {prompt}, n: 1, maxTokens: 64, stop: [], jsonObject: false, jsonSchema: null, ...extra,
        sampling: {temperature: 0, topP: 1, seed: 1, frequencyPenalty: 0, presencePenalty: 0, logitBias: new Map(), ...sampling}
    };
}

/** Runs `request` on `engine` to the end: its choices' results. */
export async function runJob(engine: LlamaChatEngine, request: ChatJob): Promise<ChoiceResult[]> {
    return (await engine.submit(request, {signal: new AbortController().signal})).done;
}
