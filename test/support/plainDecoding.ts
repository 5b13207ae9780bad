import { LlamaGrammarEvaluationState, type Llama, type LlamaContextSequence, type LlamaModel, type Token } from "node-llama-cpp";

/**
 * The sampling setups two paths of plain decoding are compared on (test/model/draftVerification.test.ts,
 * decodeAhead.test.ts): greedy, seeded, top-p, and a JSON-schema grammar; each a fresh set of options (a grammar state
 * is used up by one generation).
 */
export async function plainSamplingCases(llama: Llama, model: LlamaModel): Promise<(() => Record<string, unknown>)[]> {
    const grammar = await llama.createGrammarForJsonSchema({type: "object", properties: {story: {type: "string"}}, required: ["story"]});
    return [
        () => ({temperature: 0}),
        () => ({temperature: 0.8, seed: 7}),
        () => ({temperature: 1, topP: 0.9, seed: 3}),
        () => ({temperature: 0.5, seed: 2, grammarEvaluationState: new LlamaGrammarEvaluationState({model, grammar})})
    ];
}

/**
 * `count` tokens of plain decoding after `prompt` on `sequence`, each with its confidence and three most likely tokens,
 * with repetition, frequency and presence penalties over the tokens generated so far (as LlamaChat gives them) and
 * `options`; `afterEach` runs after each token, before the next is asked for.
 */
export async function generateWithMetadata(sequence: LlamaContextSequence, prompt: Token[], count: number, options: Record<string, unknown>,
    afterEach?: (tokens: readonly Token[]) => Promise<void>): Promise<unknown[]> {
    const tokens: Token[] = [];
    const out: unknown[] = [];
    const penalties = {repeatPenalty: {penalty: 1.05, frequencyPenalty: 0.05, presencePenalty: 0.05, punishTokens: () => tokens}};
    for await (const item of sequence.evaluateWithMetadata(prompt, {confidence: true, probabilities: true}, {...penalties, ...options})) {
        tokens.push(item.token);
        out.push([item.token, item.confidence, [...item.probabilities.entries()].slice(0, 3)]);
        await afterEach?.(tokens);
        if (tokens.length === count)
            break;
    }
    return out;
}
