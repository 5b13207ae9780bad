import { testLlamaTokens } from "../../test/support/gguf/makeTestLlamaGguf.js";

/**
 * Control tokens (end of turn, end of sequence) and the 256 byte-fallback tokens: banned, so every
 * run generates exactly max_tokens tokens and llama-server never meets invalid UTF-8 (it answers
 * 500 then).
 */
export const bannedTokenIds: number[] = Array.from({length: testLlamaTokens.firstByte.id + 256}, (_, id) => id);

/** A greedy chat request body with the banned tokens, the same for both servers. */
export function greedyChatBody(messages: {role: string, content: string}[], maxTokens: number) {
    const logitBias = Object.fromEntries(bannedTokenIds.map((id) => [String(id), -100]));
    return {model: "bench", messages, max_tokens: maxTokens, temperature: 0, seed: 1, logit_bias: logitBias};
}

const words = "the quick brown fox jumps over a lazy dog while small birds sing in tall green trees near an old stone bridge".split(" ");

/** `count` words of filler for long prompts; `salt` shifts the sequence so two texts differ. */
export function fillerText(count: number, salt: number): string {
    return Array.from({length: count}, (_, i) => words[(i * 7 + salt) % words.length]).join(" ");
}
