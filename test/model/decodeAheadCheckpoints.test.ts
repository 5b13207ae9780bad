import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LlamaContextSequence, type Llama, type LlamaContext } from "node-llama-cpp";
import { LlamaChatEngine } from "../../src/capabilities/chat/llama/LlamaChatEngine.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import { nativeContextOf, unwrapNativeContext } from "../../src/runtimes/llama/internals.js";
import { makeTestGemma2Gguf } from "../support/gguf/makeTestArchGguf.js";
import { countDecodeAhead, noDecodeAhead } from "../support/decodeAhead.js";
import { rawPromptJob as job, runJob as run } from "../support/rawPromptJobs.js";
import { testModelsDir } from "../support/testModels.js";

// A sliding-window model (Gemma 2/3/4, gpt-oss...) needs checkpoints (node-llama-cpp's `needsCheckpoints`, the
// server keeps no full SWA cache), and node-llama-cpp's speculative evaluation takes one before every step's decode
// (`_takeCheckpoint(internalCheckpoints.speculative)`): its native init first settles, i.e. waits for and throws away,
// the decode started ahead. A drafting choice that decodes ahead (after 8 quiet steps, ChoiceSpeculation.decodeAhead)
// then pays each such step's decode twice, the second only once the first has finished.
const modelPath = path.join(testModelsDir, "decode-ahead-gemma2.gguf");

type TakeCheckpoint = (this: LlamaContextSequence, name?: string, max?: number) => Promise<void>;
type SequenceInternals = {_nextTokenIndex: number, _checkpoints: {hasCheckpoint(name: string | undefined, index: number): boolean}};

describe("a step's token decoded ahead by a drafting choice on a sliding-window model", () => {
    let llama: Llama;
    let engine: LlamaChatEngine | undefined;
    const proto = LlamaContextSequence.prototype as unknown as {_takeCheckpoint: TakeCheckpoint};
    const original = proto._takeCheckpoint;
    beforeAll(async () => {
        await makeTestGemma2Gguf(modelPath, {seed: 7, slidingWindow: 8});
        llama = await loadLlamaRuntime({gpu: "off"});
    }, 60_000);
    afterAll(async () => {
        proto._takeCheckpoint = original;
        if (engine != null) {
            unwrapNativeContext((engine as unknown as {context: LlamaContext}).context);
            await engine.dispose();
        }
    });

    it("is not thrown away by the checkpoint node-llama-cpp takes before the next step", async ({skip}) => {
        engine = await LlamaChatEngine.load(llama, {id: "gemma2-lookup", modelPath, contextSize: 1024, threads: 1, parallel: 1, queueSize: 8,
            speculative: {mode: "lookup", draftMax: 16, cost: {fixed: 0, perToken: 0}}});
        const context = (engine as unknown as {context: LlamaContext}).context;
        if (typeof nativeContextOf(context).settlePrefetch !== "function")
            skip(noDecodeAhead);
        const counts = {ahead: 0, thrownAway: 0, checkpoints: 0};
        countDecodeAhead(context, counts);
        // The checkpoints node-llama-cpp takes: the settle their native init makes first, made here to count what it finds
        proto._takeCheckpoint = async function (this: LlamaContextSequence, name?: string, max?: number) {
            const internals = this as unknown as SequenceInternals;
            if (this.needsCheckpoints && internals._nextTokenIndex !== 0 && !internals._checkpoints.hasCheckpoint(name, internals._nextTokenIndex - 1)) {
                counts.checkpoints++;
                if (await nativeContextOf(this.context).settlePrefetch!())
                    counts.thrownAway++;
            }
            return original.call(this, name, max);
        };
        await run(engine, job("Once upon a time", {maxTokens: 80}, {temperature: 0.9, seed: 11}));
        expect(context.model.fileInsights.swaSize).toBeTruthy();
        expect(counts.checkpoints).toBeGreaterThan(0);
        // Every decode ahead a checkpoint throws away cost the step a whole decode
        expect(counts.thrownAway).toBe(0);
    }, 120_000);
});
