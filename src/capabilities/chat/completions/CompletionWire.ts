import type { Usage } from "../ChatCompletionWire.js";

/** OpenAI wire types of the legacy /v1/completions, as far as this server reads and writes them. */
export type CompletionRequest = {
    model: string;
    /** A string, an array of strings, an array of token ids or an array of token-id arrays. */
    prompt: string | string[] | number[] | number[][];
    suffix?: string | null;
    max_tokens?: number | null;
    temperature?: number | null;
    top_p?: number | null;
    n?: number | null;
    best_of?: number | null;
    stop?: string | string[] | null;
    seed?: number | null;
    frequency_penalty?: number | null;
    presence_penalty?: number | null;
    logit_bias?: Record<string, number> | null;
    /** 0..5: that many most likely alternatives per token (plus the chosen one). */
    logprobs?: number | null;
    echo?: boolean | null;
    stream?: boolean | null;
    stream_options?: {include_usage?: boolean} | null;
    user?: string | null;
};

/** One token's alternatives: token text -> logprob. */
export type WireTopLogprobs = Record<string, number>;

/** Parallel arrays, one entry per token; the first echoed prompt token has no logprob when nothing precedes it. */
export type WireCompletionLogprobs = {
    tokens: string[];
    token_logprobs: (number | null)[];
    top_logprobs: (WireTopLogprobs | null)[];
    text_offset: number[];
};

export type WireCompletionFinishReason = "stop" | "length";

export type WireCompletionChoice = {
    text: string;
    index: number;
    logprobs: WireCompletionLogprobs | null;
    finish_reason: WireCompletionFinishReason | null;
};

/** A streamed chunk: the response's shape, with partial text (`finish_reason` null until the end). */
export type TextCompletionChunk = {
    id: string;
    object: "text_completion";
    created: number;
    model: string;
    system_fingerprint: string;
    choices: WireCompletionChoice[];
    usage?: Usage | null;
};

/** The whole response: every choice finished. */
export type TextCompletion = Omit<TextCompletionChunk, "choices" | "usage"> & {choices: (WireCompletionChoice & {finish_reason: WireCompletionFinishReason})[], usage: Usage};
