import fs from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { LlamaEmbeddingsEngine } from "../../src/capabilities/embeddings/llama/LlamaEmbeddingsEngine.js";
import { LlamaRerankEngine } from "../../src/capabilities/rerank/llama/LlamaRerankEngine.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import { storiesModelPath, tinyRerankerGgufPath } from "../support/testModels.js";

// The GGUF models evaluated whole on one sequence (loadInputModel): embeddings and rerank load as chat models do,
// reporting how far their weights are (what GET /models shows while they load), with inputs bounded by the training context.
const disposables: {dispose(): Promise<void>}[] = [];
afterAll(async () => {
    for (const engine of disposables)
        await engine.dispose();
});

describe("GGUF embeddings and rerank engines", () => {
    it("a reranker reports its load up to 1 and takes inputs up to the limit asked for", async () => {
        const progress: number[] = [];
        const engine = await LlamaRerankEngine.load(await loadLlamaRuntime({gpu: "off"}), {
            id: "reranker", modelPath: tinyRerankerGgufPath, maxInputTokens: 40, threads: 1, queueSize: 2, onLoadProgress: (fraction) => progress.push(fraction)
        });
        disposables.push(engine);
        expect(progress.length).toBeGreaterThan(0);
        expect(progress.at(-1)).toBe(1);
        expect(engine.info.maxInputTokens).toBe(40);
        const ranked = await engine.rank("cats", ["a cat", "a dog"], {signal: new AbortController().signal});
        expect(ranked.scores).toHaveLength(2);
    });

    it.skipIf(!fs.existsSync(storiesModelPath))("an embeddings model reports its load up to 1; its limit is the training context at most", async () => {
        const progress: number[] = [];
        const engine = await LlamaEmbeddingsEngine.load(await loadLlamaRuntime({gpu: "off"}), {
            id: "stories", modelPath: storiesModelPath, maxInputTokens: 1_000_000, threads: 1, queueSize: 2, matryoshka: false, normalize: true,
            onLoadProgress: (fraction) => progress.push(fraction)
        });
        disposables.push(engine);
        expect(progress.at(-1)).toBe(1);
        expect(engine.info.maxInputTokens).toBe(512);
    });
});
