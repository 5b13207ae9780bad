import type { TokenLogprob, TopLogprob } from "../ChatEngine.js";

/**
 * A next-token distribution: `[token, probability, ...]`, most likely first. The whole vocabulary (node-llama-cpp's raw
 * distribution, RawDistributionTap) or its head, with the sampled token after it when it is not there.
 */
export type RawDistribution = ArrayLike<number>;

/** The exact bytes a token stands for (each engine reads them from its vocabulary). */
export type TokenBytesOf = {of(token: number): readonly number[]};

/** What a probability that underflowed float32 (exactly 0) is reported as, since JSON has no -Infinity; OpenAI uses the same floor. */
const minLogprob = -9999;
const lenientUtf8 = new TextDecoder("utf-8", {fatal: false});

/**
 * One generated token's logprobs entry from the raw distribution it was sampled from (sorted, most
 * likely first). `token` is the text of the token's bytes; a byte that is only part of a UTF-8
 * character reads as U+FFFD there, and `bytes` has the exact bytes.
 */
export function toTokenLogprob(token: number, distribution: RawDistribution, topLogprobs: number, bytes: TokenBytesOf): TokenLogprob {
    let probability = 0;
    for (let index = 0; index < distribution.length; index += 2)
        if (distribution[index] === token) {
            probability = distribution[index + 1];
            break;
        }
    const top: TopLogprob[] = [];
    for (let index = 0; index < topLogprobs && index * 2 < distribution.length; index++)
        top.push(entry(distribution[index * 2], distribution[index * 2 + 1], bytes));
    return {...entry(token, probability, bytes), topLogprobs: top};
}

function entry(token: number, probability: number, bytes: TokenBytesOf): TopLogprob {
    const tokenBytes = bytes.of(token);
    return {
        token: lenientUtf8.decode(Uint8Array.from(tokenBytes)),
        logprob: probability > 0 ? Math.max(minLogprob, Math.log(probability)) : minLogprob,
        bytes: [...tokenBytes]
    };
}
