import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Llama } from "node-llama-cpp";
import { LlamaChatEngine } from "../../src/capabilities/chat/llama/LlamaChatEngine.js";
import type { SpeculativeOptions } from "../../src/capabilities/chat/llama/speculation/SpeculativeOptions.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import type { ChatJob, ChoiceResult } from "../../src/capabilities/chat/ChatEngine.js";
import { makeTestLlamaGguf } from "../support/gguf/makeTestLlamaGguf.js";
import { rawPromptJob, runJob, speculationModelShape } from "../support/rawPromptJobs.js";
import { storiesModelPath, testModelsDir } from "../support/testModels.js";

// Speculative decoding must not change what greedy decoding says, token for token: prompt lookup and a draft
// model, with logprobs, grammars, n = 2, stop sequences and the prompt cache. Each model is run with speculation
// off and on, on the same requests; the copier (a model that repeats any passage of its own output it is shown)
// makes drafts accepted for real, so the accepted path is what is compared, not only the rejected one.
const copierPath = path.join(testModelsDir, "spec-copier.gguf");
const randomPath = path.join(testModelsDir, "spec-random.gguf");
const layeredPath = path.join(testModelsDir, "spec-layered.gguf");
const truncatedPath = path.join(testModelsDir, "spec-truncated.gguf");

const shape = speculationModelShape;

const job = rawPromptJob;
const run = runJob;

/** Two candidates closer than this (in log-probability) are a near-tie, which float rounding may decide either way. */
const nearTie = 1e-3;

/**
 * Greedy choices `a` (plain) and `b` (speculative), run with two top logprobs: the same tokens, or else the first
 * difference is a near-tie in both runs. A draft is verified in one batch with the tokens before it and a plain
 * step evaluates one token: llama.cpp's CPU kernels then round differently in the last bits (measured: 1e-5 in
 * log-probability on stories260K), which changes a greedy pick only where the top two are that close, exactly as
 * when two requests share a batch without speculation. Returns how many tokens were compared.
 */
function expectSameGreedy(a: ChoiceResult, b: ChoiceResult, label: unknown): number {
    const tokens = (choice: ChoiceResult) => choice.logprobs!.map((entry) => entry.token);
    const first = tokens(a).findIndex((token, index) => token !== tokens(b)[index]);
    if (first === -1) {
        expect({label, text: b.text, finishReason: b.finishReason}).toEqual({label, text: a.text, finishReason: a.finishReason});
        return tokens(a).length;
    }
    const gap = (choice: ChoiceResult) => {
        const [top, second] = choice.logprobs![first].topLogprobs;
        return top.logprob - second.logprob;
    };
    expect({label, first, plainGap: gap(a) < nearTie, speculativeGap: gap(b) < nearTie}).toEqual({label, first, plainGap: true, speculativeGap: true});
    expect(tokens(b).slice(0, first)).toEqual(tokens(a).slice(0, first));
    return first;
}

function accepted(engine: LlamaChatEngine) {
    return (engine.load().details!.speculative as {acceptedTokens: number}).acceptedTokens;
}

describe("speculative decoding gives the output of plain decoding", () => {
    let llama: Llama;
    const engines: LlamaChatEngine[] = [];
    // The prompt cache off where the runs compare outputs, unless the cache is the point: a cache hit evaluates a prompt's
    // tail in smaller batches than a miss, which moves the last bits of the logits by itself (docs/performance.md).
    const load = async (modelPath: string, speculative: SpeculativeOptions, parallel = 2, promptCache: "on" | "off" = "off") => {
        const engine = await LlamaChatEngine.load(llama, {id: speculative.mode, modelPath, contextSize: 1024, threads: 1, parallel, queueSize: 8, speculative, promptCache});
        engines.push(engine);
        return engine;
    };
    // Drafts sized by acceptance alone (a free draft: these 64-wide models are too small for their own cost to allow any).
    const cost = {fixed: 0, perToken: 0};
    const off: SpeculativeOptions = {mode: "off", draftMax: 16};
    const lookup: SpeculativeOptions = {mode: "lookup", draftMax: 16, cost};

    beforeAll(async () => {
        await makeTestLlamaGguf(copierPath, {...shape, nLayers: 2, seed: 21, residualGain: (_layer, part) => part === "attention" ? 0 : 1});
        await makeTestLlamaGguf(randomPath, {...shape, nLayers: 2, seed: 22});
        // The same seed: the truncated model has the first two layers of the layered one, whose last two barely count.
        await makeTestLlamaGguf(layeredPath, {...shape, nLayers: 4, seed: 23, residualGain: (layer) => layer >= 2 ? 0.02 : 1});
        await makeTestLlamaGguf(truncatedPath, {...shape, nLayers: 2, seed: 23});
        llama = await loadLlamaRuntime({gpu: "off"});
    }, 60_000);
    afterAll(async () => {
        for (const engine of engines)
            await engine.dispose();
    });

    /** Prompts that quote the model's own greedy text (so a copier copies), and free ones. */
    async function prompts(plain: LlamaChatEngine) {
        const seeds = ["Once upon a time", "The little dog", "Tom and Lily went", "It was a sunny day and"];
        const result: string[] = [...seeds];
        for (const seed of seeds) {
            const [source] = await run(plain, job(seed, {maxTokens: 48}));
            result.push(`Copy this text.\n\n${seed}${source.text}\n\nThe copy:\n\n${seed}`);
        }
        return result;
    }

    it("prompt lookup, greedy: the same tokens on stories260K, a random model and a copier, with drafts accepted", async () => {
        for (const modelPath of [storiesModelPath, randomPath, copierPath]) {
            const plain = await load(modelPath, off), fast = await load(modelPath, lookup);
            for (const prompt of await prompts(plain)) {
                const [a] = await run(plain, job(prompt, {logprobs: 2}));
                const [b] = await run(fast, job(prompt, {logprobs: 2}));
                expectSameGreedy(a, b, {modelPath, prompt});
            }
            if (modelPath === copierPath)
                expect(accepted(fast)).toBeGreaterThan(100);
        }
    }, 120_000);

    it("with prompt lookup on, a request that copies its prompt from another sequence answers as plain decoding", async () => {
        const plain = await load(copierPath, off), fast = await load(copierPath, lookup, 2, "on");
        const [source] = await run(plain, job("Once upon a time", {maxTokens: 48}));
        const quoted = `Copy this text.\n\nOnce upon a time${source.text}\n\nOnce upon a time${source.text}\n\nThe copy:\n\n`;
        const first = `${quoted}Once upon a time`, second = `${quoted}Once`;
        // Asked once: the model's pool holds the first's prompt and answer; then two other prompts take both sequences.
        await run(fast, job(first, {maxTokens: 64}));
        await Promise.all(["The little dog", "Tom and Lily went"].map((other) => run(fast, job(other.repeat(8), {maxTokens: 4}))));
        // Both at once: the second waits for the first's prompt, copies it and answers (the first drafts from the pool).
        const a = await fast.submit(job(first, {maxTokens: 64, logprobs: 2}), {signal: new AbortController().signal});
        const [b] = await run(fast, job(second, {logprobs: 2}));
        const [answer] = await a.done;
        expect(answer.completionTokens).toBe(64);
        expect(b.cachedPromptTokens).toBeGreaterThan(64);
        const [reference] = await run(plain, job(second, {logprobs: 2}));
        expectSameGreedy(reference, b, "copied from a drafting sequence");
    }, 120_000);

    it("a greedy request asked again is drafted from the model's pool (its first answer) from its first step, with the same tokens", async () => {
        // The random model: its free text has nothing to copy, so drafts accepted the second time come from the pool.
        const plain = await load(randomPath, off), fast = await load(randomPath, lookup);
        // Longer than the pool's 24-token runs, so that the first step already has one to look up.
        const prompt = "Tell me a story about a dog who lived on a farm with a cat, three hens and an old horse, and what they did all day long";
        const [reference] = await run(plain, job(prompt, {logprobs: 2}));
        const [first] = await run(fast, job(prompt, {logprobs: 2}));
        const acceptedFirst = accepted(fast);
        const [again] = await run(fast, job(prompt, {logprobs: 2}));
        expectSameGreedy(reference, first, "first");
        expectSameGreedy(reference, again, "again");
        expect(again.text).toBe(first.text);
        // 64 tokens in steps of a 16-token draft and the step's own sample, the prompt's last step included, the last draft
        // only as long as the budget leaves (12 of the 13 tokens left; 16 would have verified 4 for nothing): 16 + 16 + 16 + 12.
        expect(accepted(fast) - acceptedFirst).toBe(60);
        expect(acceptedFirst).toBeLessThan(16);
    }, 60_000);

    it("logprobs of accepted tokens are those of plain decoding; JSON mode, stop sequences and n = 2 give the same choices", async () => {
        const plain = await load(copierPath, off), fast = await load(copierPath, lookup);
        const [quoting] = (await prompts(plain)).slice(-1);
        const before = accepted(fast);
        const [a] = await run(plain, job(quoting, {logprobs: 3}));
        const [b] = await run(fast, job(quoting, {logprobs: 3}));
        expect(accepted(fast)).toBeGreaterThan(before);
        expect(b.text).toBe(a.text);
        expect(b.logprobs!.map((entry) => entry.token)).toEqual(a.logprobs!.map((entry) => entry.token));
        b.logprobs!.forEach((entry, index) => {
            // A draft is verified in one batch with the tokens before it, a plain step alone: the same values up to float rounding.
            expect(entry.logprob).toBeCloseTo(a.logprobs![index].logprob, 4);
            expect(entry.topLogprobs.map((top) => top.token)).toEqual(a.logprobs![index].topLogprobs.map((top) => top.token));
        });
        for (const extra of [{jsonObject: true}, {stop: ["the", "."]}, {n: 2}, {maxTokens: 5}] satisfies Partial<ChatJob>[]) {
            const plainChoices = await run(plain, job(quoting, extra));
            const fastChoices = await run(fast, job(quoting, extra));
            const view = (choices: ChoiceResult[]) => choices.map(({text, finishReason, completionTokens, stopSequence}) => ({text, finishReason, completionTokens, stopSequence}));
            expect({extra, choices: view(fastChoices)}).toEqual({extra, choices: view(plainChoices)});
        }
    }, 120_000);

    it("a choice that stops amid verified drafts leaves the sequence as it reports it: the next request, reusing it, is unchanged", async () => {
        const plain = await load(copierPath, off, 1, "on"), fast = await load(copierPath, lookup, 1, "on");
        const [quoting] = (await prompts(plain)).slice(-1);
        for (const maxTokens of [3, 7, 12]) {
            await run(plain, job(quoting, {maxTokens}));
            await run(fast, job(quoting, {maxTokens}));
            const [a] = await run(plain, job(quoting + " and", {maxTokens: 40}));
            const [b] = await run(fast, job(quoting + " and", {maxTokens: 40}));
            expect(b.cachedPromptTokens).toBeGreaterThan(0);
            expect({maxTokens, text: b.text}).toEqual({maxTokens, text: a.text});
        }
    }, 60_000);

    it("sampled: the same seed and request give the same output again with speculation on", async () => {
        const fast = await load(copierPath, lookup, 1);
        for (const seed of [1, 2, 3]) {
            const request = job("Once upon a time", {maxTokens: 48}, {temperature: 1, seed});
            const [first] = await run(fast, request);
            const [again] = await run(fast, request);
            expect({seed, text: again.text}).toEqual({seed, text: first.text});
        }
    }, 60_000);

    it("penalties turn speculation off for the choice (they are counted over the tokens generated so far)", async () => {
        const fast = await load(copierPath, lookup, 1);
        const before = fast.load().details!.speculative as {draftedTokens: number};
        await run(fast, job("Once upon a time", {maxTokens: 48}, {presencePenalty: 0.5}));
        expect((fast.load().details!.speculative as {draftedTokens: number}).draftedTokens).toBe(before.draftedTokens);
    }, 60_000);

    it("a draft model (a truncated copy of a model whose upper layers barely count) gives the same greedy tokens", async () => {
        // (A model drafting for itself would cost a whole step per draft token and is never drafted from.)
        for (const [target, draft] of [[layeredPath, truncatedPath]]) {
            const plain = await load(target, off);
            const drafted = await load(target, {mode: "draft", draftMax: 8, draftModelPath: draft, cost});
            for (const prompt of await prompts(plain)) {
                const [a] = await run(plain, job(prompt, {maxTokens: 32, logprobs: 2}));
                const [b] = await run(drafted, job(prompt, {maxTokens: 32, logprobs: 2}));
                expectSameGreedy(a, b, {target, prompt});
            }
            const [a2] = await run(plain, job("Once upon a time", {n: 2, maxTokens: 24, jsonObject: true}));
            const [b2] = await run(drafted, job("Once upon a time", {n: 2, maxTokens: 24, jsonObject: true}));
            expect(b2.text).toBe(a2.text);
            expect(accepted(drafted)).toBeGreaterThan(10);
        }
    }, 180_000);

    it("a draft model with another vocabulary is refused at load, naming both models", async () => {
        await expect(load(randomPath, {mode: "draft", draftMax: 8, draftModelPath: storiesModelPath, cost}))
            .rejects.toThrow(/Draft model 'stories260K\.gguf' cannot draft for 'spec-random\.gguf': their vocabularies differ/);
    }, 60_000);
});
