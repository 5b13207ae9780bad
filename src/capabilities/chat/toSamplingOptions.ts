import crypto from "node:crypto";
import type { SamplingOptions } from "./ChatEngine.js";

type SamplingFields = {
    temperature?: number | null, top_p?: number | null, seed?: number | null,
    frequency_penalty?: number | null, presence_penalty?: number | null
};

/** OpenAI's sampling fields (chat and legacy completions alike) with their defaults applied. */
export function toSamplingOptions(request: SamplingFields, logitBias: ReadonlyMap<number, number>): SamplingOptions {
    return {
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
