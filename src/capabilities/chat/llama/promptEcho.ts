import type { ControlledEvaluateInputItem, LlamaContextSequence, LlamaModel, Token } from "node-llama-cpp";
import type { PromptEcho, PromptTokenLogprob } from "../ChatEngine.js";
import type { TokenBytes } from "./TokenBytes.js";
import { TokenTextDecoder } from "./TokenTextDecoder.js";
import { toTokenLogprob } from "./toTokenLogprob.js";

export type PromptEchoSettings = {
    model: LlamaModel;
    tokens: readonly Token[];
    /** The client's tokens start here (after the BOS the server put first, if any). */
    clientStart: number;
    /** The prompt text as the client sent it; null = the detokenized tokens. */
    text: string | null;
    /** Entries per token (with this many alternatives) need the prompt evaluated with logits at every position. */
    logprobs?: {topLogprobs: number, bytes: TokenBytes, sequence: LlamaContextSequence, chunkSize: number, signal: AbortSignal};
};

/**
 * The echoed prompt of a legacy completion: its text, and with logprobs one entry per client token
 * with the token's log probability given everything before it in the model's input (a BOS the
 * server put first counts; the very first token of the input has none: null, as OpenAI's first).
 *
 * node-llama-cpp's `controlledEvaluate` evaluates the prompt on the given sequence with the
 * distribution after every position (a greedy sampler: the raw softmax, as RawDistributionTap
 * reports for generated tokens). That is one more evaluation of the prompt, plus a sort of the
 * vocabulary per token: paid only by requests that ask for echo and logprobs together. The
 * sequence is left dirty; generation clears it before use.
 */
export async function promptEcho(settings: PromptEchoSettings): Promise<PromptEcho> {
    const {model, tokens, clientStart} = settings;
    const client = tokens.slice(clientStart);
    // Offsets as the text is detokenized incrementally: a token's text starts where the text before it ends.
    const decoder = new TokenTextDecoder(model, tokens.slice(0, clientStart));
    const offsets: number[] = [];
    let decoded = "";
    for (const token of client) {
        offsets.push(decoded.length);
        decoded += decoder.push(token);
    }
    decoded += decoder.flush();
    const text = settings.text ?? decoded;
    if (settings.logprobs == null)
        return {text};

    const {topLogprobs, bytes, sequence, chunkSize, signal} = settings.logprobs;
    // distributions[i]: the distribution after tokens[0..i], i.e. of tokens[i + 1].
    const distributions: (Map<Token, number> | undefined)[] = [];
    await sequence.clearHistory();
    for (let start = 0; start < tokens.length - 1; start += chunkSize) {
        signal.throwIfAborted();
        const end = Math.min(tokens.length - 1, start + chunkSize);
        const input: ControlledEvaluateInputItem[] = tokens.slice(start, end).map((token, offset) =>
            start + offset + 1 >= clientStart ? [token, {generateNext: {probabilities: true, options: {temperature: 0}}}] : token);
        const results = await sequence.controlledEvaluate(input);
        results.forEach((result, offset) => distributions[start + offset] = result?.next.probabilities);
    }
    signal.throwIfAborted();

    const entries = client.map((token, index): PromptTokenLogprob => {
        const position = clientStart + index;
        const distribution = position === 0 ? undefined : distributions[position - 1];
        if (distribution == null) {
            const tokenBytes = [...bytes.of(token)];
            return {token: new TextDecoder().decode(Uint8Array.from(tokenBytes)), bytes: tokenBytes, logprob: null, topLogprobs: null, offset: offsets[index]};
        }
        const entry = toTokenLogprob(token, flatten(distribution, token, topLogprobs), topLogprobs, bytes);
        return {...entry, offset: offsets[index]};
    });
    return {text, tokens: entries};
}

/** The `topLogprobs` most likely tokens (the map is sorted) and `token`, as the flat array toTokenLogprob reads. */
function flatten(distribution: Map<Token, number>, token: Token, topLogprobs: number): number[] {
    const flat: number[] = [];
    let found = false;
    for (const [candidate, probability] of distribution) {
        if (flat.length >= topLogprobs * 2)
            break;
        flat.push(candidate, probability);
        found ||= candidate === token;
    }
    if (!found)
        flat.push(token, distribution.get(token) ?? 0);
    return flat;
}
