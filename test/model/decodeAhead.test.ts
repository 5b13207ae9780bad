import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Llama, type LlamaContext, type LlamaModel, type Token } from "node-llama-cpp";
import { LlamaChatEngine } from "../../src/capabilities/chat/llama/LlamaChatEngine.js";
import type { SpeculativeOptions } from "../../src/capabilities/chat/llama/speculation/SpeculativeOptions.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import { decodesAhead, nativeContextOf, unwrapNativeContext, wrapNativeContext } from "../../src/runtimes/llama/internals.js";
import { countDecodeAhead, generateReplacing, kvEnd, noDecodeAhead, withoutDecodeAhead, withThreadCounts } from "../support/decodeAhead.js";
import { generateWithMetadata, plainSamplingCases } from "../support/plainDecoding.js";
import type { ChatJob } from "../../src/capabilities/chat/ChatEngine.js";
import { makeTestLlamaGguf } from "../support/gguf/makeTestLlamaGguf.js";
import { DraftModelPredictor } from "../../src/capabilities/chat/llama/speculation/DraftModelPredictor.js";
import { rawPromptJob as job, runJob as run, speculationModelShape } from "../support/rawPromptJobs.js";
import { testModelsDir } from "../support/testModels.js";

// The native build decodes a step's sampled token at once, on a thread of the context's own, while JavaScript hands
// the token out (`decodeBatch` rows asking for it; the next `decodeBatch` of those rows takes that decode; `settlePrefetch`
// undoes one nobody took). It must change nothing but the time: the same tokens as decoding each step when asked, and a
// KV cache holding exactly the sequence's tokens whenever the generation ends. Native build only (the prebuilt binary
// has no such call): skipped with one line elsewhere.
const modelPath = path.join(testModelsDir, "decode-ahead-copier.gguf");
describe("a step's token decoded ahead, below the server (node-llama-cpp's plain evaluation)", () => {
    let llama: Llama;
    let model: LlamaModel;
    let context: LlamaContext;
    beforeAll(async () => {
        await makeTestLlamaGguf(modelPath, {...speculationModelShape, nLayers: 2, seed: 21, residualGain: (_layer, part) => part === "attention" ? 0 : 1});
        llama = await loadLlamaRuntime({gpu: "off"});
        model = await llama.loadModel({modelPath});
        context = await model.createContext({contextSize: 1024, sequences: 1, threads: 1});
    }, 60_000);
    afterAll(async () => {
        await context?.dispose();
        await model?.dispose();
    });

    /**
     * `count` tokens (with confidence and top probabilities) after `prompt`; `ahead` asks for each step's token to be
     * decoded ahead; `undo` undoes the decode started ahead after every token (counting those it found).
     */
    async function generate(prompt: Token[], count: number, options: Record<string, unknown>, ahead: boolean, undo = false) {
        const sequence = context.getSequence();
        let taken = 0;
        let undone = 0;
        try {
            const out = await generateWithMetadata(sequence, prompt, count, {...options, ...(ahead ? {_prefetchNextDecode: () => taken + 1 < count} : {})},
                async (tokens) => {
                    taken = tokens.length;
                    if (undo && await nativeContextOf(context).settlePrefetch!())
                        undone++;
                });
            return {out, undone, kvEnd: kvEnd(context, 0), nextTokenIndex: sequence.nextTokenIndex};
        } finally {
            sequence.dispose();
        }
    }

    it("the same tokens, confidences and probabilities: greedy, seeded, top-p, a grammar; the KV cache ends with the sequence", async ({skip}) => {
        if (!decodesAhead(context))
            skip(noDecodeAhead);
        const prompt = model.tokenize("Once upon a time") as Token[];
        for (const options of await plainSamplingCases(llama, model)) {
            const each = await generate(prompt, 40, options(), false);
            const ahead = await generate(prompt, 40, options(), true);
            expect(ahead.out).toEqual(each.out);
            // The last token is never evaluated: the sequence ends with the one before, in both.
            expect(ahead.kvEnd).toBe(ahead.nextTokenIndex - 1);
            expect(each.kvEnd).toBe(each.nextTokenIndex - 1);
            expect(ahead.nextTokenIndex).toBe(each.nextTokenIndex);
        }
    }, 60_000);

    it("a decode started ahead after every step but the prompt's; undone, the step decodes as asked and the tokens stay the same", async ({skip}) => {
        if (!decodesAhead(context))
            skip(noDecodeAhead);
        const prompt = model.tokenize("The little dog") as Token[];
        const each = await generate(prompt, 30, {temperature: 0.7, seed: 5}, false);
        const undoing = await generate(prompt, 30, {temperature: 0.7, seed: 5}, true, true);
        expect(undoing.out).toEqual(each.out);
        // Tokens 2 to 29 were each decoded ahead (the prompt's step holds the prompt, and the 30th is the last asked for).
        expect(undoing.undone).toBe(28);
        expect(undoing.kvEnd).toBe(undoing.nextTokenIndex - 1);
        // Asked for every step and never taken: the generation's end undoes the last one.
        const sequence = context.getSequence();
        try {
            const {kvEnd: end, nextTokenIndex} = await generateReplacing(sequence, prompt, 12, true, () => undefined);
            expect(end).toBe(nextTokenIndex - 1);
            expect(await nativeContextOf(context).settlePrefetch!()).toBe(false);
        } finally {
            sequence.dispose();
        }
    }, 60_000);

    it("a token the caller puts in place of the sampled one (a thought's forced end) is decoded, not the one decoded ahead", async ({skip}) => {
        if (!decodesAhead(context))
            skip(noDecodeAhead);
        const prompt = model.tokenize("It was a sunny day and") as Token[];
        // One token, as long as the sampled one: only the token tells the decode ahead from the caller's.
        const [replacement, otherReplacement] = model.tokenize(" moon and sun") as Token[];
        const generate = async (ahead: boolean) => {
            const sequence = context.getSequence();
            try {
                // Every sixth step, the caller's token goes in instead of the sampled one.
                return await generateReplacing(sequence, prompt, 24, ahead,
                    (tokens) => tokens.length % 6 === 0 ? [tokens.at(-1) === replacement ? otherReplacement : replacement] : undefined);
            } finally {
                sequence.dispose();
            }
        };
        const each = await generate(false);
        const ahead = await generate(true);
        expect(ahead.tokens).toEqual(each.tokens);
        expect(ahead.nextTokenIndex).toBe(each.nextTokenIndex);
        expect(ahead.kvEnd).toBe(ahead.nextTokenIndex - 1);
    }, 60_000);

    // node-llama-cpp's batch dispatch gives the native context the thread count its thread splitter allots before each
    // batch; the count changes whenever another context of the process starts or stops decoding. The native setThreads
    // would wait for a decode ahead on the main thread: the dispatch settles it on the thread pool first.
    it("the dispatch settles a decode ahead on the thread pool before it changes the count, and the tokens stay the same", async ({skip}) => {
        if (!decodesAhead(context))
            skip(noDecodeAhead);
        const generate = async (ahead: boolean) => {
            let pending = false;
            const changesWhilePending: number[] = [];
            let changes = 0;
            let threads = 1;
            wrapNativeContext(context, (native) => ({
                decodeBatch: (samples) => {
                    pending = ahead && samples?.length === 1 && samples[0][5] === true;
                    return native.decodeBatch(ahead ? samples : samples?.map((row) => row.slice(0, 5) as typeof row));
                },
                settlePrefetch: async () => {
                    pending = false;
                    return native.settlePrefetch!();
                },
                setThreads: (count) => {
                    if (count !== threads) {
                        changes++;
                        if (pending)
                            changesWhilePending.push(count);
                    }
                    threads = count;
                    return native.setThreads(count);
                }
            }));
            const sequence = context.getSequence();
            const tokens: Token[] = [];
            try {
                for await (const token of sequence.evaluate(model.tokenize("Once upon a time") as Token[], {temperature: 0, ...(ahead ? {_prefetchNextDecode: true} : {})} as Record<string, unknown>)) {
                    tokens.push(token);
                    if (tokens.length === 24)
                        break;
                }
                return {tokens, changes, changesWhilePending, kvEnd: kvEnd(context, 0), nextTokenIndex: sequence.nextTokenIndex};
            } finally {
                sequence.dispose();
                unwrapNativeContext(context);
            }
        };
        // The splitter stood in for by one that alternates 1 and 2 threads, batch after batch.
        let batches = 0;
        await withThreadCounts(context, () => 1 + (batches++ % 2), async () => {
            const each = await generate(false);
            const ahead = await generate(true);
            expect(ahead.tokens).toEqual(each.tokens);
            expect(ahead.changes).toBeGreaterThan(10);
            expect(ahead.changesWhilePending).toEqual([]);
            expect(ahead.kvEnd).toBe(ahead.nextTokenIndex - 1);
        });
    }, 60_000);

    // With getLlama's maxThreads 0 and a context's threads 0 the splitter hands out 0 ("the machine's count", which the
    // native setThreads resolves): the same count every batch, never a reason to undo the decode ahead.
    it("a count of 0 handed out batch after batch undoes no decode ahead", async ({skip}) => {
        if (!decodesAhead(context))
            skip(noDecodeAhead);
        await withThreadCounts(context, () => 0, async () => {
            let undone = 0;
            wrapNativeContext(context, (native) => ({
                settlePrefetch: async () => {
                    const had = await native.settlePrefetch!();
                    undone += had ? 1 : 0;
                    return had;
                }
            }));
            const sequence = context.getSequence();
            let taken = 0;
            try {
                for await (const _token of sequence.evaluate(model.tokenize("Once upon a time") as Token[], {temperature: 0, _prefetchNextDecode: () => taken + 1 < 24} as Record<string, unknown>))
                    if (++taken === 24)
                        break;
                expect(undone).toBe(0);
                expect(kvEnd(context, 0)).toBe(sequence.nextTokenIndex - 1);
            } finally {
                sequence.dispose();
                unwrapNativeContext(context);
            }
        });
    }, 60_000);
});

describe("a step's token decoded ahead in the chat engine: the same responses as without", () => {
    let llama: Llama;
    const engines: LlamaChatEngine[] = [];
    const contextOf = (engine: LlamaChatEngine) => (engine as unknown as {context: LlamaContext}).context;
    const load = async (speculative: SpeculativeOptions, ahead: boolean, count?: {ahead: number}) => {
        const engine = await LlamaChatEngine.load(llama, {id: `${speculative.mode}-${ahead}`, modelPath, contextSize: 1024, threads: 1, parallel: 2, queueSize: 8, speculative});
        engines.push(engine);
        if (!ahead)
            withoutDecodeAhead(contextOf(engine));
        else if (count != null)
            countDecodeAhead(contextOf(engine), count);
        return engine;
    };
    beforeAll(async () => {
        await makeTestLlamaGguf(modelPath, {...speculationModelShape, nLayers: 2, seed: 21, residualGain: (_layer, part) => part === "attention" ? 0 : 1});
        llama = await loadLlamaRuntime({gpu: "off"});
    }, 60_000);
    afterAll(async () => {
        for (const engine of engines) {
            unwrapNativeContext(contextOf(engine));
            await engine.dispose();
        }
    });

    /** The requests, in turn on each engine (so the prompt cache and the sequences go through the same states): the same results. */
    async function expectSame(a: LlamaChatEngine, b: LlamaChatEngine, requests: ChatJob[]) {
        for (const request of requests) {
            const [left, right] = [await run(a, request), await run(b, request)];
            expect(JSON.stringify(right)).toBe(JSON.stringify(left));
        }
        // Side by side: two requests at once share the batches.
        for (let index = 0; index + 1 < requests.length; index += 2) {
            const left = await Promise.all([run(a, requests[index]), run(a, requests[index + 1])]);
            const right = await Promise.all([run(b, requests[index]), run(b, requests[index + 1])]);
            expect(JSON.stringify(right)).toBe(JSON.stringify(left));
        }
    }

    const requests = () => {
        const schema = {type: "object", properties: {story: {type: "string"}}, required: ["story"]};
        return ["Once upon a time", "The little dog", "It was a sunny day and"].flatMap((prompt) => [
            job(prompt),
            job(prompt, {n: 2}, {temperature: 0.8, seed: 4}),
            job(prompt, {stop: [" the", "."]}),
            job(`${prompt} and then`, {maxTokens: 7}),
            job(prompt, {jsonSchema: schema, maxTokens: 24}),
            job(prompt, {}, {temperature: 1, topP: 0.9, seed: 9, frequencyPenalty: 0.4}),
            // Logprobs read each step's logits after its decode: no decode ahead there.
            job(prompt, {logprobs: 2, maxTokens: 16})
        ]);
    };

    it("/health says whether the engine decodes ahead", async ({skip}) => {
        const engine = await load({mode: "off", draftMax: 16}, true);
        expect(engine.describe().decodeAhead).toBe(decodesAhead(contextOf(engine)));
        if (!engine.describe().decodeAhead)
            skip(noDecodeAhead);
        expect(engine.load().details!.decodeAhead).toBe(true);
    }, 60_000);

    it("plain decoding: greedy, sampled, stops, budgets, a schema, penalties, n > 1, side by side", async ({skip}) => {
        const count = {ahead: 0};
        const ahead = await load({mode: "off", draftMax: 16}, true, count);
        if (!ahead.describe().decodeAhead)
            skip(noDecodeAhead);
        await expectSame(await load({mode: "off", draftMax: 16}, false), ahead, requests());
        expect(count.ahead).toBeGreaterThan(500);
    }, 180_000);

    it("with prompt lookup (its drafts decide when a step's token is decoded ahead)", async ({skip}) => {
        const count = {ahead: 0};
        const speculative: SpeculativeOptions = {mode: "lookup", draftMax: 16, cost: {fixed: 0, perToken: 0}};
        const ahead = await load(speculative, true, count);
        if (!ahead.describe().decodeAhead)
            skip(noDecodeAhead);
        await expectSame(await load(speculative, false), ahead, requests());
        expect(count.ahead).toBeGreaterThan(0);
    }, 180_000);
});

describe("a draft model's drafts, their tokens decoded ahead", () => {
    const draftModelPath = path.join(testModelsDir, "decode-ahead-draft.gguf");
    let llama: Llama;
    let model: LlamaModel;
    let context: LlamaContext;
    beforeAll(async () => {
        await makeTestLlamaGguf(draftModelPath, {...speculationModelShape, nLayers: 2, seed: 23});
        llama = await loadLlamaRuntime({gpu: "off"});
        model = await llama.loadModel({modelPath: draftModelPath});
        context = await model.createContext({contextSize: 1024, sequences: 1, threads: 1});
    }, 60_000);
    afterAll(async () => {
        await context?.dispose();
        await model?.dispose();
    });

    it("the same drafts as drafting each token when asked, the last one not decoded", async ({skip}) => {
        if (!decodesAhead(context))
            skip(noDecodeAhead);
        const drafts = async (ahead: boolean) => {
            const count = {ahead: 0};
            if (ahead)
                countDecodeAhead(context, count);
            else
                withoutDecodeAhead(context);
            const sequence = context.getSequence();
            const predictor = new DraftModelPredictor(sequence, {maxDraft: 12, cost: {fixed: 0, perToken: 0}});
            try {
                const state = model.tokenize("Once upon a time there was") as Token[];
                predictor.reset({stateTokens: state});
                const out: Token[][] = [];
                for (let step = 0; step < 4; step++) {
                    const draft = await predictor.predictTokens();
                    out.push(draft);
                    // The target takes the first half of the draft and a token of its own.
                    predictor.pushTokens([...draft.slice(0, draft.length >> 1), 5 as Token]);
                    expect(kvEnd(context, 0)).toBe(sequence.nextTokenIndex - 1);
                }
                return {out, ahead: count.ahead};
            } finally {
                predictor.dispose();
                unwrapNativeContext(context);
            }
        };
        const each = await drafts(false);
        const ahead = await drafts(true);
        expect(ahead.out).toEqual(each.out);
        expect(ahead.out.every((draft) => draft.length > 1)).toBe(true);
        // Asked for every drafted token but each draft's last.
        expect(ahead.ahead).toBe(ahead.out.reduce((sum, draft) => sum + draft.length - 1, 0));
    }, 60_000);

    // llama.cpp's p-min (`--draft-p-min`, manifest `draftPMin`): any binary.
    it("a draft stops before the first token the draft model gives less probability than the floor", async () => {
        const state = model.tokenize("Once upon a time there was") as Token[];
        const firstDraft = async (pMin: number) => {
            const predictor = new DraftModelPredictor(context.getSequence(), {maxDraft: 12, cost: {fixed: 0, perToken: 0}, pMin});
            try {
                predictor.reset({stateTokens: state});
                return await predictor.predictTokens();
            } finally {
                predictor.dispose();
            }
        };
        // The draft model's own greedy tokens after the text, and its probability of each
        const sequence = context.getSequence();
        const picks: {token: Token, confidence: number}[] = [];
        try {
            for await (const {token, confidence} of sequence.evaluateWithMetadata(state, {confidence: true}, {temperature: 0})) {
                picks.push({token, confidence});
                if (picks.length === 12)
                    break;
            }
        } finally {
            sequence.dispose();
        }
        const whole = await firstDraft(0);
        expect(whole).toEqual(picks.map(({token}) => token));
        // The least sure pick after the first: the floor just above it ends the draft there, just below it keeps it whole
        let leastIndex = 1;
        for (let index = 2; index < picks.length; index++)
            if (picks[index].confidence < picks[leastIndex].confidence)
                leastIndex = index;
        const least = {...picks[leastIndex], index: leastIndex};
        expect(picks.slice(0, least.index).every(({confidence}) => confidence > least.confidence)).toBe(true);
        expect(await firstDraft(least.confidence + 1e-6)).toEqual(whole.slice(0, least.index));
        expect(await firstDraft(Math.min(...picks.map(({confidence}) => confidence)) - 1e-6)).toEqual(whole);
        expect(await firstDraft(1)).toEqual([]);
    }, 60_000);
});
