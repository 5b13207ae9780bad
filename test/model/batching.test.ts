import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LlamaChatEngine } from "../../src/capabilities/chat/llama/LlamaChatEngine.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import type { ChatJob } from "../../src/capabilities/chat/ChatEngine.js";
import { tinyChatModelPath } from "../support/testModels.js";

// Concurrent generations must share llama.cpp batches, in sequence-id order (an out-of-order
// multi-sequence batch is split by llama.cpp and costs nearly as much as separate decodes). This
// looks at node-llama-cpp internals on purpose: an upgrade that changes them must fail here.
describe("concurrent generations are decoded in shared, ordered batches", () => {
    let engine: LlamaChatEngine;
    const batches: number[][] = [];
    beforeAll(async () => {
        engine = await LlamaChatEngine.load(await loadLlamaRuntime({gpu: "off"}), {
            id: "tiny", modelPath: tinyChatModelPath, contextSize: 256, threads: 1, parallel: 4, queueSize: 4
        });
        const context = (engine as unknown as {context: {_ctx: Record<string, (...args: unknown[]) => unknown>}}).context;
        const native = context._ctx;
        context._ctx = new Proxy(native, {
            get(target, property) {
                const value = target[property as string];
                if (property === "initBatch")
                    return (...args: unknown[]) => {
                        batches.push([]);
                        return value.apply(target, args);
                    };
                if (property === "addToBatch")
                    return (...args: unknown[]) => {
                        batches.at(-1)!.push(args[0] as number);
                        return value.apply(target, args);
                    };
                return typeof value === "function" ? value.bind(target) : value;
            }
        });
    });
    afterAll(() => engine?.dispose());

    const job = (seed: number): ChatJob => ({
        turns: [{role: "user", content: "hi"}], n: 1, maxTokens: 40, stop: [], jsonObject: false, jsonSchema: null,
        sampling: {temperature: 1, topP: 1, seed, frequencyPenalty: 0, presencePenalty: 0, logitBias: new Map()}
    });

    it("4 streams: nearly every generation step decodes all 4 sequences together, in id order", async () => {
        batches.length = 0;
        const runs = [1, 2, 3, 4].map(async (seed) => (await engine.submit(job(seed), {signal: new AbortController().signal})).done);
        const results = (await Promise.all(runs)).flat();
        expect(results.every((result) => result.completionTokens === 40)).toBe(true);
        const full = batches.filter((batch) => batch.length === 4);
        // 40 tokens each: the first comes from the prompt batch, the other 39 from shared steps.
        expect(full.length).toBeGreaterThanOrEqual(38);
        for (const batch of full)
            expect(batch).toEqual([...batch].sort((a, b) => a - b));
    });
});
