import crypto from "node:crypto";
import { ApiError } from "../../core/http/ApiError.js";
import type { SamplingOptions } from "./ChatEngine.js";

type SamplingFields = {
    temperature?: number | null, top_p?: number | null, seed?: number | null,
    frequency_penalty?: number | null, presence_penalty?: number | null,
    top_k?: number | null, min_p?: number | null, repeat_penalty?: number | null, repetition_penalty?: number | null, repeat_last_n?: number | null,
    ignore_eos?: boolean | null
};

/** llama.cpp's default window of the repetition penalty (`repeat_last_n`). */
const defaultRepeatLastN = 64;

/**
 * llama-server's and vLLM's sampling fields as they mean them there: `top_k` (0 or -1: the whole vocabulary), `min_p`
 * (0: none), `repeat_penalty` or vLLM's `repetition_penalty` (1: none) over the last `repeat_last_n` tokens of the
 * prompt and the completion (llama.cpp's default 64; -1: all of them; 0: none), `ignore_eos`.
 */
function llamaSamplingFields(request: SamplingFields): Pick<SamplingOptions, "topK" | "minP" | "repeatPenalty" | "ignoreEos"> {
    const topK = request.top_k != null && request.top_k > 0 ? {topK: request.top_k} : {};
    const minP = request.min_p != null && request.min_p > 0 ? {minP: request.min_p} : {};
    if (request.repeat_penalty != null && request.repetition_penalty != null && request.repeat_penalty !== request.repetition_penalty)
        throw ApiError.invalidRequest("'repetition_penalty' and 'repeat_penalty' are two names of one setting (vLLM's and llama-server's); send one.", "repetition_penalty");
    const param = request.repetition_penalty != null ? "repetition_penalty" : "repeat_penalty";
    const penalty = request.repetition_penalty ?? request.repeat_penalty;
    const lastN = request.repeat_last_n ?? defaultRepeatLastN;
    const repeatPenalty = penalty != null && penalty !== 1 && lastN !== 0 ? {repeatPenalty: {penalty, lastN: lastN < 0 ? Infinity : lastN, param}} : {};
    return {...topK, ...minP, ...repeatPenalty, ...request.ignore_eos === true ? {ignoreEos: true} : {}};
}

/** OpenAI's sampling fields (chat and legacy completions alike) with their defaults applied, and llama-server's and vLLM's own. */
export function toSamplingOptions(request: SamplingFields, logitBias: ReadonlyMap<number, number>): SamplingOptions {
    return {
        ...llamaSamplingFields(request),
        temperature: request.temperature ?? 1,
        topP: request.top_p ?? 1,
        // node-llama-cpp would seed unseeded requests with the current second, making two unseeded requests in the
        // same second identical; a random seed per job also keeps two equal prompts of one request apart.
        seed: request.seed ?? crypto.randomInt(0, 2 ** 48 - 1),
        frequencyPenalty: request.frequency_penalty ?? 0,
        presencePenalty: request.presence_penalty ?? 0,
        logitBias
    };
}
