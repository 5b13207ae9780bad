import type { ControlledEvaluateInputItem, LlamaContextSequence, LlamaModel, Token } from "node-llama-cpp";
import type { PromptEcho, PromptTokenLogprob, TokenLogprob } from "../ChatEngine.js";
import type { RawDistributionTap } from "./RawDistributionTap.js";
import type { TokenBytes } from "./TokenBytes.js";
import { TokenTextDecoder } from "../shared/TokenTextDecoder.js";
import { llamaDetokenize } from "./llamaTokenizerParts.js";
import { toTokenLogprob } from "../shared/toTokenLogprob.js";

export type PromptEchoSettings = {
    model: LlamaModel;
    tokens: readonly Token[];
    /** The client's tokens start here (after the BOS the server put first, if any). */
    clientStart: number;
    /** The prompt text as the client sent it; null = the detokenized tokens. */
    text: string | null;
    /** Entries per token (with this many alternatives) need the prompt evaluated with logits at every position. */
    logprobs?: {topLogprobs: number, bytes: TokenBytes, tap: RawDistributionTap, sequence: LlamaContextSequence, chunkSize: number, signal: AbortSignal};
};

/**
 * The echoed prompt of a legacy completion: its text, and with logprobs one entry per client token
 * with the token's log probability given everything before it in the model's input (a BOS the
 * server put first counts; the very first token of the input has none: null, as OpenAI's first).
 *
 * node-llama-cpp's `controlledEvaluate` evaluates the prompt on the given sequence with logits at
 * every position, and RawDistributionTap reads the model's raw distribution there, exactly as it
 * does for generated tokens (so a prompt token's logprob is the one it would have had if it had
 * been generated). That is one more evaluation of the prompt, plus a softmax and sort of the
 * vocabulary per token: paid only by requests that ask for echo and logprobs together. The
 * sequence is left dirty; generation clears it before use.
 */
export async function promptEcho(settings: PromptEchoSettings): Promise<PromptEcho> {
    const {model, tokens, clientStart} = settings;
    const client = tokens.slice(clientStart);
    // Offsets as the text is detokenized incrementally: a token's text starts where the text before it ends.
    const decoder = new TokenTextDecoder(llamaDetokenize(model), tokens.slice(0, clientStart));
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

    const {topLogprobs, bytes, sequence, tap, chunkSize, signal} = settings.logprobs;
    // entries[i]: tokens[i]'s entry, from the raw distribution after tokens[0..i-1]. The tap reports
    // the positions asked for in order (node-llama-cpp samples a decode's logits one after the other).
    const logprobs = new Map<number, TokenLogprob>();
    const waiting: number[] = [];
    await sequence.clearHistory();
    const unwatch = tap.watch(sequence, (_greedy, distribution) => {
        const position = waiting.shift()! + 1;
        logprobs.set(position, toTokenLogprob(tokens[position], distribution, topLogprobs, bytes));
    });
    try {
        for (let start = 0; start < tokens.length - 1; start += chunkSize) {
            signal.throwIfAborted();
            const end = Math.min(tokens.length - 1, start + chunkSize);
            const input = tokens.slice(start, end).map((token, offset): ControlledEvaluateInputItem => {
                if (start + offset + 1 < clientStart)
                    return token;
                waiting.push(start + offset);
                return [token, {generateNext: {token: true, options: {temperature: 0}}}];
            });
            await sequence.controlledEvaluate(input);
        }
    } finally {
        unwatch();
    }
    signal.throwIfAborted();

    const entries = client.map((token, index): PromptTokenLogprob => {
        const entry = logprobs.get(clientStart + index);
        if (entry == null) {
            const tokenBytes = [...bytes.of(token)];
            return {token: new TextDecoder().decode(Uint8Array.from(tokenBytes)), bytes: tokenBytes, logprob: null, topLogprobs: null, offset: offsets[index]};
        }
        return {...entry, offset: offsets[index]};
    });
    return {text, tokens: entries};
}
