import { ApiError } from "../../../core/http/ApiError.js";
import type { ChatEngineInfo, ChatJob } from "../ChatEngine.js";
import { toLogitBias } from "../toLogitBias.js";
import { toSamplingOptions } from "../toSamplingOptions.js";
import type { CompletionRequest } from "./CompletionWire.js";

/** OpenAI's default for the legacy endpoint (chat's default is "until the context is full"). */
const defaultMaxTokens = 16;

/** What one completion request runs: a chat-engine job per prompt, and how their choices come back. */
export type CompletionPlan = {
    /** One job per prompt, in order; choice k of prompt p is `choices[p * n + k]` on the wire. */
    jobs: ChatJob[];
    /** Choices returned per prompt. */
    n: number;
    /** Candidates generated per prompt (>= n): the n with the highest mean token logprob are returned. */
    bestOf: number;
    /** What the client asked for (the jobs may ask for more: best_of ranks by logprobs). */
    logprobs: number | null;
    echo: boolean;
};

/**
 * Converts a validated legacy completion request into chat-engine jobs with raw prompts, applying
 * OpenAI's defaults and the checks a schema cannot express. Pure: it needs only the engine's info.
 */
export function toCompletionJobs(request: CompletionRequest, engine: ChatEngineInfo): CompletionPlan {
    const prompts = toPrompts(request.prompt, engine.vocabularySize);
    const n = request.n ?? 1;
    const bestOf = request.best_of ?? n;
    if (bestOf < n)
        throw ApiError.invalidRequest(`'best_of' (${bestOf}) must be greater than or equal to 'n' (${n}).`, "best_of");
    if (request.stream === true && bestOf > n)
        throw ApiError.invalidRequest("'best_of' greater than 'n' cannot be streamed: the best choices are known only at the end.", "best_of");
    if (request.stream_options != null && request.stream !== true)
        throw ApiError.invalidRequest("The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options");

    // An empty suffix is no suffix (editors send one at the end of a file), on any model.
    const suffix = request.suffix == null || request.suffix === "" ? null : request.suffix;
    if (suffix != null && engine.fillInTheMiddle !== true)
        throw ApiError.invalidRequest(
            `'suffix' (fill in the middle) is not supported by the model '${engine.id}': its vocabulary has no fill-in-the-middle tokens.`,
            "suffix", "unsupported_parameter");
    const echo = request.echo === true;
    if (echo && suffix != null)
        throw ApiError.invalidRequest("'echo' cannot be used together with 'suffix'.", "echo");

    const logprobs = request.logprobs ?? null;
    const logitBias = toLogitBias(request.logit_bias, engine.vocabularySize);
    const jobs = prompts.map((prompt): ChatJob => ({
        turns: [],
        rawPrompt: {prompt, suffix, echo},
        n: bestOf,
        maxTokens: request.max_tokens ?? defaultMaxTokens,
        stop: request.stop == null ? [] : typeof request.stop === "string" ? [request.stop] : [...request.stop],
        jsonObject: false,
        jsonSchema: null,
        // best_of ranks the candidates by their tokens' logprobs, asked for even when the client did not.
        logprobs: logprobs ?? (bestOf > n ? 0 : null),
        tools: null,
        sampling: toSamplingOptions(request, logitBias)
    }));
    return {jobs, n, bestOf, logprobs, echo};
}

/** The prompts of a request: one string, strings, one token array or token arrays (all of one kind; ids in the vocabulary). */
function toPrompts(prompt: CompletionRequest["prompt"], vocabularySize: number): (string | number[])[] {
    if (typeof prompt === "string")
        return [prompt];
    const kind = kindOf(prompt[0]);
    if (kind == null)
        throw ApiError.invalidRequest(
            "Invalid 'prompt': expected a string, an array of strings, an array of token ids or an array of token-id arrays.", "prompt[0]");
    prompt.forEach((item, index) => {
        if (kindOf(item) !== kind)
            throw ApiError.invalidRequest(
                `Invalid 'prompt[${index}]': every item of 'prompt' must be ${kindText[kind]}, as its first item is.`, `prompt[${index}]`);
    });
    if (kind === "string")
        return prompt as string[];
    if (kind === "token") {
        checkTokens(prompt as number[], "prompt", vocabularySize);
        return [prompt as number[]];
    }
    return (prompt as number[][]).map((tokens, index) => {
        const param = `prompt[${index}]`;
        if (tokens.length === 0)
            throw ApiError.invalidRequest(`Invalid '${param}': a token array must not be empty.`, param);
        checkTokens(tokens, param, vocabularySize);
        return tokens;
    });
}

type PromptKind = "string" | "token" | "tokens";
const kindText: Record<PromptKind, string> = {string: "a string", token: "a token id", tokens: "an array of token ids"};

function kindOf(item: unknown): PromptKind | null {
    if (typeof item === "string")
        return "string";
    if (Number.isInteger(item))
        return "token";
    if (Array.isArray(item))
        return "tokens";
    return null;
}

/** Refuses (400 naming `param[i]`) the first item of `tokens` that is not a token id of the model's vocabulary. */
export function checkTokens(tokens: readonly unknown[], param: string, vocabularySize: number) {
    tokens.forEach((token, index) => {
        if (!Number.isInteger(token) || (token as number) < 0 || (token as number) >= vocabularySize)
            throw ApiError.invalidRequest(
                `Invalid '${param}[${index}]': ${JSON.stringify(token)} is not a token id of this model (ids are integers from 0 to ${vocabularySize - 1}).`,
                `${param}[${index}]`);
    });
}
