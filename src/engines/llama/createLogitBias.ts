import { TokenBias, type LlamaModel } from "node-llama-cpp";

type TokenBiasInternals = {_biases: Map<number, number>};

/**
 * OpenAI's `logit_bias`: the value is added to the token's logit, -100 bans it and 100 forces it.
 * node-llama-cpp's public `TokenBias.set` silently skips end-of-generation tokens, which would
 * make `{"<eos id>": -100}` a no-op, so the biases are written into its map directly; the native
 * sampler applies whatever the map holds. `assertLogitBiasSupported` checks at startup that the
 * installed version still has that map.
 */
export function createLogitBias(model: LlamaModel, biases: ReadonlyMap<number, number>): TokenBias | undefined {
    if (biases.size === 0)
        return undefined;
    const tokenBias = new TokenBias(model.tokenizer);
    const map = (tokenBias as unknown as TokenBiasInternals)._biases;
    for (const [token, bias] of biases)
        map.set(token, bias <= -100 ? -Infinity : bias);
    return tokenBias;
}

export function assertLogitBiasSupported(model: LlamaModel) {
    const map = (new TokenBias(model.tokenizer) as unknown as Partial<TokenBiasInternals>)._biases;
    if (!(map instanceof Map))
        throw new Error("This node-llama-cpp version has no TokenBias._biases map; logit_bias for end-of-generation tokens needs updating.");
}
