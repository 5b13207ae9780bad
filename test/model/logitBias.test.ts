import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getLlama, LlamaLogLevel, type LlamaContext, type LlamaModel, type Token } from "node-llama-cpp";
import { createLogitBias } from "../../src/capabilities/chat/llama/createLogitBias.js";
import { testLlamaTokens } from "../support/gguf/makeTestLlamaGguf.js";
import { tinyChatModelPath } from "../support/testModels.js";

// The distribution the native sampler draws from, after the sampler chain (bias included).
describe("logit_bias reaches the native sampler, end-of-generation tokens included", () => {
    let model: LlamaModel;
    let context: LlamaContext;
    beforeAll(async () => {
        const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
        model = await llama.loadModel({modelPath: tinyChatModelPath});
        context = await model.createContext({contextSize: 64, threads: 1});
    });
    afterAll(async () => {
        await context?.dispose();
        await model?.dispose();
    });

    async function distribution(bias: Map<number, number>) {
        const sequence = context.getSequence();
        try {
            const tokens = sequence.evaluateWithMetadata([1, 300, 301] as Token[], {probabilities: true}, {
                temperature: 1, topK: 0, topP: 1, minP: 0, seed: 1, yieldEogToken: true,
                tokenBias: createLogitBias(model, bias)
            });
            const first = await tokens.next();
            await tokens.return(undefined);
            return (first.value as {probabilities: Map<number, number>}).probabilities;
        } finally {
            sequence.dispose();
        }
    }

    const eos = testLlamaTokens.eos.id as Token;

    it("-100 on the EOS token makes its probability exactly 0 (node-llama-cpp's TokenBias would skip it)", async () => {
        expect(model.isEogToken(eos)).toBe(true);
        const plain = await distribution(new Map());
        expect(plain.get(eos)).toBeGreaterThan(0);
        const banned = await distribution(new Map([[eos, -100]]));
        expect(banned.get(eos) ?? 0).toBe(0);
    });

    it("a bias is added to the logit: +b multiplies the token's odds by e^b", async () => {
        const plain = await distribution(new Map());
        const boosted = await distribution(new Map([[eos, 3], [500, -2]]));
        const odds = (p: number) => p / (1 - p);
        expect(odds(boosted.get(eos)!) / odds(plain.get(eos)!)).toBeCloseTo(Math.exp(3), 0);
        const ratioOthers = (boosted.get(954)! / boosted.get(263)!) / (plain.get(954)! / plain.get(263)!);
        expect(ratioOthers).toBeCloseTo(1, 3);
        expect(boosted.get(500)! / plain.get(500)!).toBeLessThan(Math.exp(-2) * 1.01);
    });
});
