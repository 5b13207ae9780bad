import type { Tensor } from "@huggingface/transformers";
import { logSumExp } from "../../../../runtimes/onnx/logSumExp.js";

type Processor = (ids: bigint[][], logits: Tensor) => Tensor;

/** What a ban (`logit_bias` -100 or below) adds, as the llama engine's createLogitBias: finite, so it stays a number. */
const banned = -1e4;

/** Each row of the logits (one per sequence of the batch). */
function forEachRow(logits: Tensor, each: (scores: Float32Array, row: number) => void) {
    const vocabulary = logits.dims.at(-1)!;
    const data = logits.data as Float32Array;
    for (let row = 0; row * vocabulary < data.length; row++)
        each(data.subarray(row * vocabulary, (row + 1) * vocabulary), row);
}

/** OpenAI's `logit_bias`: the value added to the token's logit; -100 (or below) bans it. */
export function logitBiasProcessor(biases: readonly (readonly [token: number, bias: number])[]): Processor {
    return (_ids, logits) => {
        forEachRow(logits, (scores) => {
            for (const [token, bias] of biases)
                if (token < scores.length)
                    scores[token] += bias <= -100 ? banned : bias;
        });
        return logits;
    };
}

/**
 * OpenAI's `frequency_penalty` and `presence_penalty` over the tokens generated so far (the prompt's never count), as
 * llama.cpp's penalties sampler applies them: a token seen `count` times loses `count * frequency + presence`.
 */
export function penaltiesProcessor(promptLength: number, frequency: number, presence: number): Processor {
    return (ids, logits) => {
        forEachRow(logits, (scores, row) => {
            const counts = new Map<number, number>();
            for (let index = promptLength; index < ids[row].length; index++) {
                const token = Number(ids[row][index]);
                counts.set(token, (counts.get(token) ?? 0) + 1);
            }
            for (const [token, count] of counts)
                scores[token] -= count * frequency + presence;
        });
        return logits;
    };
}

/**
 * Reads the model's own next-token distribution before anything changes it (the first processor): per step, the
 * `top` most likely tokens and the log of the softmax's denominator, so that any token's log-probability is its
 * logit minus it. One sequence (the engine generates each choice alone).
 */
export class RawLogitsTap {
    private logits: Float32Array | null = null;
    private logTotal = 0;

    readonly processor: Processor = (_ids, logits) => {
        const vocabulary = logits.dims.at(-1)!;
        this.logits = (logits.data as Float32Array).slice(0, vocabulary);
        this.logTotal = logSumExp(this.logits);
        return logits;
    };

    /** A token's probability at the last step (softmax of its logits). */
    probability(token: number): number {
        if (this.logits == null)
            throw new Error("No logits were read");
        return Math.exp(this.logits[token] - this.logTotal);
    }

    /**
     * The last step's distribution as toTokenLogprob reads it: `[token, probability, ...]`, the `top` most likely first,
     * then `token` (the one sampled) when it is not among them.
     */
    distribution(token: number, top: number): number[] {
        const scores = this.logits;
        if (scores == null)
            throw new Error("No logits were read before the token was sampled");
        const best: number[] = [];
        for (let index = 0; top > 0 && index < scores.length; index++) {
            if (best.length === top && scores[index] <= scores[best[top - 1]])
                continue;
            let at = Math.min(best.length, top - 1);
            if (best.length < top)
                best.push(index);
            while (at > 0 && scores[best[at - 1]] < scores[index]) {
                best[at] = best[at - 1];
                at--;
            }
            best[at] = index;
        }
        const tokens = best.includes(token) ? best : [...best, token];
        return tokens.flatMap((index) => [index, Math.exp(scores[index] - this.logTotal)]);
    }
}
