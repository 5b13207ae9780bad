import { TokenBias, type LlamaModel } from "node-llama-cpp";
import { assertTokenBiasMap, tokenBiasMap } from "../../../runtimes/llama/internals.js";

const banned = -1e4;

/**
 * OpenAI's `logit_bias`: the value is added to the token's logit, -100 bans it and 100 forces it.
 *
 * A ban is a very large finite penalty, not -Infinity: its probability still underflows to exactly
 * 0, but when a grammar (JSON mode, json_schema) allows nothing except banned tokens, the sampler
 * can still pick a valid one instead of failing (node-llama-cpp then never settles the request:
 * it hangs, and the error surfaces as an unhandled rejection). As with node-llama-cpp's own
 * "never", the grammar wins over the ban.
 * node-llama-cpp's public `TokenBias.set` silently skips end-of-generation tokens, which would
 * make `{"<eos id>": -100}` a no-op, so the biases are written into its map directly (tokenBiasMap); the native
 * sampler applies whatever the map holds. `assertLogitBiasSupported` checks at startup that the
 * installed version still has that map.
 */
export function createLogitBias(model: LlamaModel, biases: ReadonlyMap<number, number>): TokenBias | undefined {
    if (biases.size === 0)
        return undefined;
    const tokenBias = new TokenBias(model.tokenizer);
    const map = tokenBiasMap(tokenBias);
    for (const [token, bias] of biases)
        map.set(token, bias <= -100 ? banned : bias);
    return tokenBias;
}

export function assertLogitBiasSupported(model: LlamaModel) {
    assertTokenBiasMap(model);
}
