import type { Token } from "node-llama-cpp";
import { describe, expect, it, vi } from "vitest";
import { NgramLookup } from "../../src/capabilities/chat/llama/speculation/NgramLookup.js";
import { DraftLength } from "../../src/capabilities/chat/llama/speculation/DraftLength.js";
import { estimatedStepMs, modelDraftCost } from "../../src/capabilities/chat/llama/speculation/modelDraftCost.js";
import { PromptLookupPredictor } from "../../src/capabilities/chat/llama/speculation/PromptLookupPredictor.js";
import { NgramPool } from "../../src/capabilities/chat/llama/speculation/NgramPool.js";
import { ChoiceSpeculation } from "../../src/capabilities/chat/llama/speculation/ChoiceSpeculation.js";
import { SwitchablePredictor } from "../../src/capabilities/chat/llama/speculation/SwitchablePredictor.js";
import { chatManifest } from "../../src/capabilities/chat/chatManifest.js";
import { speculativeOptions } from "../../src/capabilities/chat/speculativeOptions.js";
import { loadConfig } from "../../src/config.js";
import { storiesModelPath } from "../support/testModels.js";

const t = (...ids: number[]) => ids as Token[];

describe("NgramLookup: drafts from the text's earlier occurrences of its last tokens", () => {
    it("continues the latest earlier occurrence of the longest matching suffix, up to the end of the text", () => {
        const lookup = new NgramLookup({minNgram: 2, maxNgram: 4});
        lookup.reset(t(1, 2, 3, 4, 5, 9, 2, 3, 7, 8, 1, 2, 3));
        // Suffix [1,2,3] occurred at the start (followed by 4, 5 ...); [2,3] alone more recently (followed by 7): longest wins.
        expect(lookup.draft(3)).toEqual(t(4, 5, 9));
        expect(lookup.match()).toEqual({n: 3, end: 3});
        lookup.push(t(6));
        // [3,6] never occurred, nor [6]: nothing.
        expect(lookup.draft(3)).toEqual([]);
        lookup.push(t(2, 3));
        // [6,2,3] no; [2,3] latest earlier occurrence is the one ending at index 13 (followed by 6, 2, 3, then the
        // repetition goes on: 6, 2, 3 ...).
        expect(lookup.draft(8)).toEqual(t(6, 2, 3, 6, 2, 3, 6, 2));
    });

    it("a one-token match is not enough, and the current suffix never matches itself", () => {
        const lookup = new NgramLookup({minNgram: 2, maxNgram: 3});
        lookup.reset(t(5, 1, 5));
        expect(lookup.draft(4)).toEqual([]);
        lookup.reset(t(7, 7));
        expect(lookup.draft(4)).toEqual([]);
        lookup.push(t(7));
        expect(lookup.draft(4)).toEqual(t(7, 7, 7, 7));
    });
});

describe("DraftLength: drafts as long as they pay for their verification", () => {
    const cost = {fixed: 0.4, perToken: 0.3};
    it("grows with accepted drafts, pauses after rejected ones with doubling pauses, and tries one token after a pause", () => {
        const lengths = new DraftLength(16);
        // The prior (q = 1/3) pays for no draft: a one-step pause, then one token to try.
        expect([lengths.next(cost), lengths.next(cost)]).toEqual([0, 1]);
        lengths.record(1, 1);
        // A copy: every draft accepted whole. q rises, and the length with it, up to the maximum.
        const drafted: number[] = [];
        for (let step = 0; step < 40; step++) {
            const length = lengths.next(cost);
            if (length > 0) {
                drafted.push(length);
                lengths.record(length, length);
            }
        }
        expect(drafted.length).toBeGreaterThan(5);
        expect(drafted.slice(-5)).toEqual([16, 16, 16, 16, 16]);
        expect(lengths.next(cost)).toBe(16);
        // A copied passage ends: the next draft is capped at two tokens, and q falls as drafts keep failing.
        lengths.record(16, 0);
        expect(lengths.next(cost)).toBe(2);
        const fresh = new DraftLength(16);
        const pausesSeen: number[] = [];
        for (let round = 0; round < 30; round++) {
            let paused = 0;
            let length = fresh.next(cost);
            while (length === 0) {
                paused++;
                length = fresh.next(cost);
            }
            pausesSeen.push(paused);
            fresh.record(length, 0);
        }
        // Once q < costRatio: pauses of 1, 2, 4 ... steps without drafting (each followed by a one-token draft), capped at 64.
        const firstPause = pausesSeen.findIndex((paused) => paused > 0);
        expect(pausesSeen.slice(firstPause, firstPause + 8)).toEqual([1, 2, 4, 8, 16, 32, 64, 64]);
    });
});

describe("the draft cost: fixed by the model's size, never by a clock", () => {
    it("a 1 MB model (stories260K) never drafts; a 58 MB one does; on a large one a draft token costs about a tenth of a step", () => {
        expect(estimatedStepMs(1_040_128)).toBeCloseTo(0.6, 1);
        expect(DraftLength.canPay(modelDraftCost(1_040_128), 64)).toBe(false);
        const mid = modelDraftCost(58_208_256);
        expect(DraftLength.canPay(mid, 16)).toBe(true);
        expect(DraftLength.shortestPaying(mid)).toBe(1);
        const large = modelDraftCost(4_000_000_000);
        expect(large.perToken).toBeCloseTo(0.1, 2);
        expect(large.fixed).toBeLessThan(0.001);
        // A draft model adds its own step per draft token.
        expect(modelDraftCost(58_208_256, 0.25).perToken).toBeCloseTo(mid.perToken + 0.25, 10);
        // Sampled in one native call, a draft token costs its batch row and a share of that call: even a 1 MB model can draft.
        expect(modelDraftCost(58_208_256, 0, "native").perToken).toBeLessThan(mid.perToken);
        expect(DraftLength.canPay(modelDraftCost(1_040_128, 0, "native"), 64)).toBe(true);
    });

    it("prompt lookup drafts the same on a busy machine as on an idle one: its lengths come from what was accepted", () => {
        // A passage, then its copy with one token changed: drafts are accepted, one is cut short, and drafting goes on.
        const passage = Array.from({length: 24}, (_, index) => 10 + index);
        const prompt = t(...passage, 1, ...passage.slice(0, 3));
        const answer = t(...passage.slice(3, 12), 99, ...passage.slice(13), 1, ...passage.slice(0, 8));
        const drafts = (clockStepMs: number) => {
            let now = 0;
            const clock = vi.spyOn(performance, "now").mockImplementation(() => now += clockStepMs);
            try {
                const predictor = new PromptLookupPredictor({maxDraft: 16, minNgram: 2, maxNgram: 4, cost: modelDraftCost(58_208_256)});
                predictor.reset({stateTokens: [...prompt]} as unknown as Parameters<PromptLookupPredictor["reset"]>[0]);
                const lengths: number[] = [];
                // The target takes the accepted part of each draft and one token of its own.
                for (let position = 0; position < answer.length;) {
                    const draft = predictor.predictTokens();
                    lengths.push(draft.length);
                    let accepted = 0;
                    while (accepted < draft.length && draft[accepted] === answer[position + accepted])
                        accepted++;
                    const taken = answer.slice(position, position + accepted + 1);
                    predictor.pushTokens(taken);
                    position += taken.length;
                }
                return lengths;
            } finally {
                clock.mockRestore();
            }
        };
        const idle = drafts(0.001);
        expect(idle.filter((length) => length > 1).length).toBeGreaterThan(1);
        expect(drafts(50)).toEqual(idle);
    });
});

describe("NgramPool: what a model's sequences read and wrote, across requests", () => {
    const range = (from: number, count: number) => t(...Array.from({length: count}, (_, index) => from + index));

    it("chains the tokens that followed each run of n, and knows no run it was not given", () => {
        const pool = new NgramPool(3, 1024);
        pool.add(range(100, 40));
        // The last 3 tokens of a text that holds 110, 111, 112: then 113, 114 ... to the end of what was added.
        expect(pool.draft(t(1, 2, 110, 111, 112), 5)).toEqual(range(113, 5));
        expect(pool.draft(t(137, 138, 139), 5)).toEqual([]);
        expect(pool.draft(range(130, 3), 50)).toEqual(range(133, 7));
        expect(pool.draft(t(111, 112), 5)).toEqual([]);
        // Never seen: nothing.
        expect(pool.draft(t(5, 6, 7), 5)).toEqual([]);
        // `from` adds only the runs that start there or after.
        const later = new NgramPool(3, 1024);
        later.add(range(100, 40), 20);
        expect(later.draft(range(110, 3), 3)).toEqual([]);
        expect(later.draft(range(120, 3), 3)).toEqual(range(123, 3));
    });

    it("a slot another run took is not that run's (the check), and a quarter-full pool starts again", () => {
        // One slot: every run lands in it; only the run that wrote it last reads it.
        const pool = new NgramPool(2, 1);
        pool.add(t(1, 2, 3));
        pool.add(t(7, 8, 9));
        // A pool of one slot is over a quarter full at once, so it is emptied after each add.
        expect(pool.draft(t(7, 8), 1)).toEqual([]);
        const roomy = new NgramPool(2, 64);
        roomy.add(t(1, 2, 3));
        roomy.add(t(7, 8, 9));
        expect(roomy.draft(t(1, 2), 1)).toEqual(t(3));
        expect(roomy.draft(t(7, 8), 1)).toEqual(t(9));
        // 38 more runs in 64 slots: past a quarter full, emptied.
        roomy.add(range(200, 40));
        expect(roomy.draft(t(1, 2), 1)).toEqual([]);
    });

    const predictorFor = (pool: NgramPool, temperature = 0) => {
        // A 58 MB model whose drafts are verified in one native call (per position, a draft token costs more: 48 at most pay).
        const predictor = new PromptLookupPredictor({maxDraft: 64, minNgram: 2, maxNgram: 4, cost: modelDraftCost(58_208_256, 0, "native"), pool});
        return {predictor, reset: (prompt: Token[]) =>
            predictor.reset({stateTokens: [...prompt], evaluateOptions: {temperature}} as unknown as Parameters<PromptLookupPredictor["reset"]>[0])};
    };

    it("a greedy generation drafts long at once what another request wrote after the same 24 tokens; a sampled one does not", () => {
        const pool = new NgramPool(24);
        const prompt = range(1000, 40);
        const answer = range(3000, 100);
        // The first request: its prompt and its answer go to the pool as they come.
        const first = predictorFor(pool);
        first.reset(prompt);
        for (const token of answer)
            first.predictor.pushTokens([token]);
        // The same request again, greedy: the whole first answer is drafted, 64 tokens at once (not one-token tries).
        const again = predictorFor(pool);
        again.reset(prompt);
        expect(again.predictor.predictTokens()).toEqual(answer.slice(0, 64));
        // The predictor's own lookup (its text only) had nothing to draft from: the prompt does not repeat.
        const alone = predictorFor(new NgramPool(24));
        alone.reset(prompt);
        expect(alone.predictor.predictTokens()).toEqual([]);
        // Sampled: what was drafted would decide which random numbers its seed gives, so no draft from other requests.
        const sampled = predictorFor(pool, 0.8);
        sampled.reset(prompt);
        expect(sampled.predictor.predictTokens()).toEqual([]);
    });

    it("a draft never goes past what the generation may still take (its budget)", () => {
        const pool = new NgramPool(24);
        const prompt = range(1000, 40);
        const first = predictorFor(pool);
        first.reset(prompt);
        first.predictor.pushTokens(range(3000, 100));
        const again = predictorFor(pool);
        again.reset(prompt);
        again.predictor.budget = 5;
        expect(again.predictor.predictTokens()).toEqual(range(3000, 5));
        again.predictor.pushTokens(range(3000, 6));
        again.predictor.budget = 0;
        expect(again.predictor.predictTokens()).toEqual([]);
    });
});

describe("ChoiceSpeculation: a choice's side of it", () => {
    it("switches the sequence's predictor on for the choice, with its budget, and off when it ends (the next prompt's chunks do not reset it)", async () => {
        const pool = new NgramPool(24);
        const inner = new PromptLookupPredictor({maxDraft: 64, minNgram: 2, maxNgram: 4, cost: {fixed: 0, perToken: 0}, pool});
        const predictor = new SwitchablePredictor(inner);
        const counts = {used: 0, unused: 0, validated: 0, refuted: 0};
        const sequence = {tokenPredictions: counts} as unknown as ConstructorParameters<typeof ChoiceSpeculation>[0];
        const speculation = new ChoiceSpeculation(sequence, predictor, true, 100);
        expect([predictor.active, inner.budget]).toEqual([true, 99]);
        speculation.remaining(10);
        expect(inner.budget).toBe(9);
        await speculation.end();
        expect([predictor.active, inner.budget]).toEqual([false, Number.POSITIVE_INFINITY]);
        // Off: a reset (node-llama-cpp's, at each prompt chunk of the next request) reaches neither the lookup nor the pool.
        const reset = vi.spyOn(inner, "reset");
        predictor.reset({stateTokens: t(...Array.from({length: 40}, (_, index) => index))} as unknown as Parameters<SwitchablePredictor["reset"]>[0]);
        expect(reset).not.toHaveBeenCalled();
        expect(pool.draft(t(...Array.from({length: 24}, (_, index) => index)), 1)).toEqual([]);
    });
});

describe("speculative settings", () => {
    it("--speculative, --draft-max and --draft-p-min, and the manifest's speculative/draftModel/draftMax/draftPMin per model", () => {
        expect(loadConfig([], {})).toMatchObject({speculative: "lookup", draftMax: 64, draftPMin: 0});
        expect(loadConfig(["--draft-p-min", "0.75"], {}).draftPMin).toBe(0.75);
        expect(loadConfig([], {DRAFT_P_MIN: ".5"}).draftPMin).toBe(0.5);
        for (const bad of ["1.5", "-0.1", "abc", "0x1", "1e-1"])
            expect(() => loadConfig(["--draft-p-min", bad], {})).toThrow(/draft-p-min must be a probability from 0 to 1/);
        expect(loadConfig(["--speculative", "off", "--draft-max", "4"], {})).toMatchObject({speculative: "off", draftMax: 4});
        expect(loadConfig([], {SPECULATIVE: "draft"}).speculative).toBe("draft");
        expect(() => loadConfig(["--speculative", "ngram"], {})).toThrow(/speculative/);
        expect(() => loadConfig(["--draft-max", "0"], {})).toThrow(/draft-max must be an integer from 1 to 64/);

        const entry = {id: "m", path: "/x/m.gguf", folder: "/"};
        const config = {speculative: "lookup", draftMax: 16, draftPMin: 0} as const;
        const plain = chatManifest.parse({}, entry);
        expect(speculativeOptions(plain, config)).toEqual({mode: "lookup", draftMax: 16});
        expect(speculativeOptions(plain, {...config, speculative: "draft"})).toEqual({mode: "lookup", draftMax: 16});
        expect(speculativeOptions(chatManifest.parse({speculative: "off"}, entry), config).mode).toBe("off");
        const drafted = chatManifest.parse({draftModel: storiesModelPath, draftMax: 6}, entry);
        expect(speculativeOptions(drafted, config)).toEqual({mode: "draft", draftMax: 6, draftModelPath: storiesModelPath, draftPMin: 0});
        expect(speculativeOptions(drafted, {...config, draftPMin: 0.6}).draftPMin).toBe(0.6);
        expect(speculativeOptions(chatManifest.parse({draftModel: storiesModelPath, draftPMin: 0.9}, entry), {...config, draftPMin: 0.6}).draftPMin).toBe(0.9);
        expect(() => chatManifest.parse({speculative: "draft"}, entry)).toThrow(/no 'draftModel'/);
        expect(() => chatManifest.parse({draftModel: "missing.gguf"}, entry)).toThrow(/does not exist/);
    });
});
