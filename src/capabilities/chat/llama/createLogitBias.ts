import { TokenBias, type LlamaModel, type Token } from "node-llama-cpp";
import { assertTokenBiasMap, tokenBiasMap } from "../../../runtimes/llama/internals.js";
import { ggmlTokenType, ggmlVocabulary } from "./ggmlVocabulary.js";

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

/** The model's end-of-generation tokens (llama.cpp's EOG set: EOS, EOT, `<|im_end|>`...), read once per model. */
const endOfGeneration = new WeakMap<LlamaModel, readonly number[]>();

/**
 * `biases` with every end-of-generation token banned, as llama-server's `ignore_eos` does: generation runs to its
 * token limit. The EOG tokens are among the vocabulary's tokens that are not normal text (control, user-defined,
 * unknown: llama.cpp also takes `<|im_end|>`, `<end_of_turn>`... by their text when a file types them otherwise), a few
 * hundred to check rather than the whole vocabulary, and EOS / EOT themselves.
 */
export function withEndOfGenerationBanned(model: LlamaModel, biases: ReadonlyMap<number, number>): ReadonlyMap<number, number> {
    let tokens = endOfGeneration.get(model);
    if (tokens == null) {
        const types = ggmlVocabulary(model)?.token_type ?? [];
        const found = new Set<number>([model.tokens.eos, model.tokens.eot].filter((token): token is Token => token != null));
        types.forEach((type, token) => {
            if (type !== ggmlTokenType.normal && model.isEogToken(token as Token))
                found.add(token);
        });
        endOfGeneration.set(model, tokens = [...found]);
    }
    const banned = new Map(biases);
    for (const token of tokens)
        banned.set(token, -100);
    return banned;
}

export function assertLogitBiasSupported(model: LlamaModel) {
    assertTokenBiasMap(model);
}
