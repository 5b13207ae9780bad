import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InputLookupTokenPredictor, type Llama, type LlamaContext, type LlamaModel, type Token } from "node-llama-cpp";
import { LlamaChatEngine } from "../../src/capabilities/chat/llama/LlamaChatEngine.js";
import type { DraftVerification, SpeculativeOptions } from "../../src/capabilities/chat/llama/speculation/SpeculativeOptions.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import { draftVerificationOf, unwrapNativeContext, wrapNativeContext } from "../../src/runtimes/llama/internals.js";
import type { ChatJob } from "../../src/capabilities/chat/ChatEngine.js";
import { makeTestLlamaGguf } from "../support/gguf/makeTestLlamaGguf.js";
import { rawPromptJob, runJob, speculationModelShape } from "../support/rawPromptJobs.js";
import { generateWithMetadata, plainSamplingCases } from "../support/plainDecoding.js";
import { testModelsDir } from "../support/testModels.js";

// A draft verified in one native call (`sampleDraft`, the project's addition to node-llama-cpp's addon, in the native
// build only) and one native call per position (every binary) must give the same bytes: greedy and seeded sampling,
// JSON mode and a schema, logit bias, logprobs, and (below the server, which turns speculation off for them)
// repetition penalties. The copier repeats any passage of its own output it is shown, so drafts are accepted for real.
const copierPath = path.join(testModelsDir, "draft-verification-copier.gguf");
const shape = speculationModelShape;

const noNativeBuild = "skipped: this binary has no native draft sampling (the prebuilt one, or a native build older than the patch: run `npm run build:native`)";

const job = rawPromptJob;
const run = runJob;

function speculationStats(engine: LlamaChatEngine) {
    return engine.load().details!.speculative as {draftedTokens: number, acceptedTokens: number};
}

describe("a draft verified in one native call gives the bytes of one call per position", () => {
    let llama: Llama;
    const engines: LlamaChatEngine[] = [];
    const load = async (verification: DraftVerification) => {
        // Drafts sized by acceptance alone: this model is too small for its own cost to allow any.
        const speculative: SpeculativeOptions = {mode: "lookup", draftMax: 16, cost: {fixed: 0, perToken: 0}, verification};
        const engine = await LlamaChatEngine.load(llama, {id: verification, modelPath: copierPath, contextSize: 1024, threads: 1, parallel: 2, queueSize: 8, speculative, promptCache: "off"});
        engines.push(engine);
        return engine;
    };
    let perPosition: LlamaChatEngine;
    let native: LlamaChatEngine;
    const quoting: string[] = [];

    beforeAll(async () => {
        await makeTestLlamaGguf(copierPath, {...shape, nLayers: 2, seed: 21, residualGain: (_layer, part) => part === "attention" ? 0 : 1});
        llama = await loadLlamaRuntime({gpu: "off"});
        perPosition = await load("per-position");
        native = await load("native");
        for (const seed of ["Once upon a time", "The little dog", "It was a sunny day and"]) {
            const [source] = await run(perPosition, job(seed, {maxTokens: 48}));
            quoting.push(`Copy this text.\n\n${seed}${source.text}\n\nThe copy:\n\n${seed}`);
        }
    }, 60_000);
    afterAll(async () => {
        for (const engine of engines)
            await engine.dispose();
    });

    /** Every request on both engines: the same choices, byte for byte (logprobs included), with drafts accepted on both. */
    async function expectSameOnBoth(requests: ChatJob[], minAccepted: number) {
        const before = [speculationStats(perPosition).acceptedTokens, speculationStats(native).acceptedTokens];
        for (const request of requests) {
            const a = await run(perPosition, request);
            const b = await run(native, request);
            expect(JSON.stringify(b)).toBe(JSON.stringify(a));
        }
        expect(speculationStats(perPosition).acceptedTokens - before[0]).toBeGreaterThan(minAccepted);
        expect(speculationStats(native).acceptedTokens - before[1]).toBe(speculationStats(perPosition).acceptedTokens - before[0]);
    }

    it("/health names the path: per-position where asked, native where the binary has it", ({skip}) => {
        expect(perPosition.load().details!.draftVerification).toBe("per-position");
        if (native.load().details!.draftVerification !== "native")
            skip(noNativeBuild);
        expect(native.load().details!.draftVerification).toBe("native");
    });

    it("greedy, with logprobs, JSON mode, a schema and logit bias", async ({skip}) => {
        if (native.load().details!.draftVerification !== "native")
            skip(noNativeBuild);
        const schema = {type: "object", properties: {story: {type: "string"}}, required: ["story"]};
        await expectSameOnBoth(quoting.flatMap((prompt) => [
            job(prompt),
            job(prompt, {logprobs: 3}),
            job(prompt, {jsonObject: true, maxTokens: 32}),
            job(prompt, {jsonSchema: schema, maxTokens: 32}),
            // (a bias on a spread of ids: some of them are in the quoted text, whose drafts the bias then cuts short)
            job(prompt, {}, {logitBias: new Map(Array.from({length: 40}, (_, index) => [100 + 7 * index, index % 2 === 0 ? -4 : 2]))})
        ]), 100);
    }, 120_000);

    it("seeded sampling (one random number per sampled position on both paths), with logprobs and top-p", async ({skip}) => {
        if (native.load().details!.draftVerification !== "native")
            skip(noNativeBuild);
        await expectSameOnBoth(quoting.flatMap((prompt) => [1, 2, 3].flatMap((seed) => [
            job(prompt, {}, {temperature: 0.7, seed}),
            job(prompt, {logprobs: 2}, {temperature: 1, topP: 0.9, seed})
        ])), 5);
    }, 120_000);
});

describe("below the server: node-llama-cpp's speculative evaluation, one call or one per position", () => {
    let llama: Llama;
    let model: LlamaModel;
    let context: LlamaContext;
    beforeAll(async () => {
        await makeTestLlamaGguf(copierPath, {...shape, nLayers: 2, seed: 21, residualGain: (_layer, part) => part === "attention" ? 0 : 1});
        llama = await loadLlamaRuntime({gpu: "off"});
        model = await llama.loadModel({modelPath: copierPath});
        context = await model.createContext({contextSize: 1024, sequences: 1, threads: 1});
    }, 60_000);
    afterAll(async () => {
        await context?.dispose();
        await model?.dispose();
    });

    /** `count` tokens generated after `prompt`, drafts from node-llama-cpp's own prompt lookup; `nativeDrafts` false hides `sampleDraft`. */
    async function generate(prompt: Token[], count: number, sampling: {temperature: number, seed?: number}, nativeDrafts: boolean, penalize = true) {
        if (!nativeDrafts)
            wrapNativeContext(context, () => ({sampleDraft: undefined}));
        const predictor = new InputLookupTokenPredictor({patternLength: {min: 2}, predictionLength: {max: 16}});
        predictor.updateInputTokens(prompt);
        const sequence = context.getSequence({tokenPredictor: predictor});
        const tokens: Token[] = [];
        // Penalties over the tokens generated so far, as LlamaChat gives them.
        const options = {...sampling, ...(penalize ? {repeatPenalty: {penalty: 1.05, frequencyPenalty: 0.05, presencePenalty: 0.05, punishTokens: () => tokens}} : {})};
        try {
            for await (const token of sequence.evaluate(prompt, options)) {
                tokens.push(token);
                if (tokens.length === count)
                    break;
            }
            return {tokens, validated: sequence.tokenPredictions.validated};
        } finally {
            sequence.dispose();
            unwrapNativeContext(context);
        }
    }

    /**
     * `count` tokens of plain decoding (no drafts: node-llama-cpp's `_evaluate`) with their confidence and three most likely
     * tokens; `inDecode` false hides `sampleDraft`, so each token is sampled by a call of its own after the decode.
     */
    async function plain(prompt: Token[], count: number, options: Record<string, unknown>, inDecode: boolean) {
        const calls = {inDecode: 0, alone: 0};
        wrapNativeContext(context, (original) => ({
            ...(inDecode ? {} : {sampleDraft: undefined}),
            sampleToken: (...args) => (calls.alone++, original.sampleToken(...args)),
            decodeBatch: (samples) => (calls.inDecode += samples == null ? 0 : 1, original.decodeBatch(samples))
        }));
        const sequence = context.getSequence();
        try {
            return {out: await generateWithMetadata(sequence, prompt, count, options), calls};
        } finally {
            sequence.dispose();
            unwrapNativeContext(context);
        }
    }

    it("plain decoding: a token sampled in the decode call is the one a call of its own samples (greedy, seeded, top-p, a grammar)", async ({skip}) => {
        if (draftVerificationOf(context) !== "native")
            skip(noNativeBuild);
        const prompt = model.tokenize("Once upon a time") as Token[];
        for (const options of await plainSamplingCases(llama, model)) {
            const alone = await plain(prompt, 24, options(), false);
            const inDecode = await plain(prompt, 24, options(), true);
            expect(inDecode.out).toEqual(alone.out);
            expect(alone.calls).toEqual({inDecode: 0, alone: 24});
            expect(inDecode.calls).toEqual({inDecode: 24, alone: 0});
        }
    }, 60_000);

    it("repetition, frequency and presence penalties; greedy and seeded", async ({skip}) => {
        if (draftVerificationOf(context) !== "native")
            skip(noNativeBuild);
        // The passage is the copier's own greedy text, which it then copies.
        const seed = model.tokenize("Once upon a time");
        const passage = [...seed, ...(await generate(seed, 48, {temperature: 0}, false, false)).tokens];
        const prompt = [...passage, ...model.tokenize("\n\nAgain:\n\n"), ...passage.slice(0, 4)] as Token[];
        for (const sampling of [{temperature: 0}, {temperature: 0.8, seed: 7}]) {
            const a = await generate(prompt, 40, sampling, false);
            const b = await generate(prompt, 40, sampling, true);
            expect({sampling, tokens: b.tokens}).toEqual({sampling, tokens: a.tokens});
            expect(a.validated).toBeGreaterThan(0);
            expect(b.validated).toBe(a.validated);
        }
    }, 60_000);
});
