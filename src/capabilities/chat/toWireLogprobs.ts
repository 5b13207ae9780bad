import type { TokenLogprob } from "./ChatEngine.js";
import type { WireLogprobs } from "./ChatCompletionWire.js";

/** OpenAI's `logprobs` object of a choice or chunk; null when logprobs were not asked for. */
export function toWireLogprobs(entries: readonly TokenLogprob[] | undefined): WireLogprobs | null {
    if (entries == null)
        return null;
    return {
        content: entries.map((entry) => ({
            token: entry.token,
            logprob: entry.logprob,
            bytes: entry.bytes,
            top_logprobs: entry.topLogprobs.map((top) => ({token: top.token, logprob: top.logprob, bytes: top.bytes}))
        })),
        refusal: null
    };
}
