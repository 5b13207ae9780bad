import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Llama, LlamaContext, LlamaModel, Token } from "node-llama-cpp";
import { LlamaChatEngine } from "../../src/capabilities/chat/llama/LlamaChatEngine.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import { unwrapNativeContext } from "../../src/runtimes/llama/internals.js";
import { binaryDecodesAhead, generateReplacing, noDecodeAhead, withoutDecodeAhead } from "../support/decodeAhead.js";
import { makeTestMambaGguf } from "../support/gguf/makeTestArchGguf.js";
import { rawPromptJob as job, runJob as run } from "../support/rawPromptJobs.js";
import { testModelsDir } from "../support/testModels.js";

// A recurrent model (mamba; hybrids such as Qwen3.5, LFM2, Granite 4 H, Nemotron-H, Jamba are the same) keeps one
// state per sequence, not a cell per token: llama.cpp cannot take its last token back (`llama_memory_seq_rm` of the
// tail returns false without a per-token snapshot, n_rs_seq = 0 here). A decode started ahead and then undone
// (settlePrefetch) leaves the state one token ahead of what node-llama-cpp knows: the next decode of that position
// fails ("inconsistent sequence positions", "Eval has failed").
const modelPath = path.join(testModelsDir, "decode-ahead-mamba.gguf");
describe("a step's token decoded ahead on a recurrent model, below the server", () => {
    let llama: Llama;
    let model: LlamaModel;
    let context: LlamaContext;
    beforeAll(async () => {
        await makeTestMambaGguf(modelPath, {seed: 5});
        llama = await loadLlamaRuntime({gpu: "off"});
        model = await llama.loadModel({modelPath, ignoreMemorySafetyChecks: true});
        context = await model.createContext({contextSize: 512, sequences: 2, threads: 1, ignoreMemorySafetyChecks: true});
    }, 60_000);
    afterAll(async () => {
        await context?.dispose();
        await model?.dispose();
    });

    /** 16 greedy tokens; every `replaceEvery`-th step the caller's token goes in instead; then ` and then` is evaluated after them. */
    async function generate(ahead: boolean, replaceEvery?: number) {
        const sequence = context.getSequence();
        const prompt = model.tokenize("Once upon a time") as Token[];
        const [replacement] = model.tokenize(" dog", false, "trimLeadingSpace") as Token[];
        try {
            const generated = await generateReplacing(sequence, prompt, 16, ahead,
                (tokens) => replaceEvery != null && tokens.length % replaceEvery === 0 ? [replacement] : undefined);
            // The sequence continues where it ended (a conversation's next turn on a kept prefix)
            await sequence.evaluateWithoutGeneratingNewTokens(model.tokenize(" and then", false) as Token[]);
            return generated;
        } finally {
            sequence.dispose();
        }
    }

    it("a generation that ends after a decode ahead: the state holds the sequence's tokens and the sequence goes on", async ({skip}) => {
        if (!binaryDecodesAhead(context))
            skip(noDecodeAhead);
        const each = await generate(false);
        expect(each.kvEnd).toBe(each.nextTokenIndex - 1);
        const ahead = await generate(true);
        expect(ahead.kvEnd).toBe(ahead.nextTokenIndex - 1);
        expect(ahead.tokens).toEqual(each.tokens);
    }, 60_000);

    it("a token put in place of the sampled one after a decode ahead: the same tokens as decoding when asked", async ({skip}) => {
        if (!binaryDecodesAhead(context))
            skip(noDecodeAhead);
        const each = await generate(false, 5);
        const ahead = await generate(true, 5);
        expect(ahead.tokens).toEqual(each.tokens);
    }, 60_000);
});

describe("a step's token decoded ahead in the chat engine, on a recurrent model: the same responses as without", () => {
    let llama: Llama;
    const engines: LlamaChatEngine[] = [];
    const contextOf = (engine: LlamaChatEngine) => (engine as unknown as {context: LlamaContext}).context;
    const load = async (ahead: boolean) => {
        const engine = await LlamaChatEngine.load(llama, {id: `mamba-${ahead}`, modelPath, contextSize: 512, threads: 1, parallel: 2, queueSize: 8,
            speculative: {mode: "off", draftMax: 16}});
        engines.push(engine);
        if (!ahead)
            withoutDecodeAhead(contextOf(engine));
        return engine;
    };
    beforeAll(async () => {
        await makeTestMambaGguf(modelPath, {seed: 5});
        llama = await loadLlamaRuntime({gpu: "off"});
    }, 60_000);
    afterAll(async () => {
        for (const engine of engines) {
            unwrapNativeContext(contextOf(engine));
            await engine.dispose();
        }
    });

    it("two requests side by side, one ending at a stop sequence while the other goes on; n = 2", async ({skip}) => {
        const each = await load(false);
        const ahead = await load(true);
        if (!binaryDecodesAhead(contextOf(ahead)))
            skip(noDecodeAhead);
        // A stop sequence the greedy answer reaches after a few tokens
        const [probe] = await run(each, job("The little dog", {maxTokens: 12}));
        // the same on both engines (their prompt caches go through the same states)
        expect(JSON.stringify(await run(ahead, job("The little dog", {maxTokens: 12})))).toBe(JSON.stringify([probe]));
        const stop = probe.text.slice(Math.floor(probe.text.length / 2), Math.floor(probe.text.length / 2) + 2);
        const requests = [job("Once upon a time", {maxTokens: 32}), job("The little dog", {maxTokens: 32, stop: [stop]})];
        const left = await Promise.all(requests.map((request) => run(each, request)));
        const right = await Promise.all(requests.map((request) => run(ahead, request)));
        expect(JSON.stringify(right)).toBe(JSON.stringify(left));
        const sampled = job("It was a sunny day and", {n: 2, maxTokens: 24, stop: [stop]}, {temperature: 0.9, seed: 3});
        expect(JSON.stringify(await run(ahead, sampled))).toBe(JSON.stringify(await run(each, sampled)));
    }, 120_000);
});
