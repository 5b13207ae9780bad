import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LlamaContext, LlamaModel, Token } from "node-llama-cpp";
import { LlamaChatEngine } from "../../src/capabilities/chat/llama/LlamaChatEngine.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import { DecodeStepBarrier } from "../../src/capabilities/chat/llama/DecodeStepBarrier.js";
import { RawDistributionTap } from "../../src/capabilities/chat/llama/RawDistributionTap.js";
import type { RawDistribution } from "../../src/capabilities/chat/shared/toTokenLogprob.js";
import { TokenBytes } from "../../src/capabilities/chat/llama/TokenBytes.js";
import { createLogitBias } from "../../src/capabilities/chat/llama/createLogitBias.js";
import { generateChoice, type ChoiceSettings } from "../../src/capabilities/chat/llama/generateChoice.js";
import type { ChatJob, ChoiceResult } from "../../src/capabilities/chat/ChatEngine.js";
import { testLlamaTokens } from "../support/gguf/makeTestLlamaGguf.js";
import { gpt2VocabPath, tinyChatModelPath } from "../support/testModels.js";

const prompt = [1, 3, 300, 301, 302, 4, 3, 320] as Token[];

describe("logprobs come from the model's raw distribution and do not change sampling", () => {
    let model: LlamaModel;
    let context: LlamaContext;
    let tap: RawDistributionTap;
    let bytes: TokenBytes;
    beforeAll(async () => {
        const llama = await loadLlamaRuntime({gpu: "off"});
        model = await llama.loadModel({modelPath: tinyChatModelPath});
        context = await model.createContext({contextSize: 256, sequences: 2, threads: 1});
        tap = RawDistributionTap.install(context, model);
        bytes = new TokenBytes(model);
    });
    afterAll(async () => {
        await context?.dispose();
        await model?.dispose();
    });

    async function generate(extra: Partial<ChoiceSettings>, topLogprobs: number | null, seen?: RawDistribution[]) {
        const sequence = context.getSequence();
        // Another watched (idle) sequence must not interfere.
        const other = seen == null ? undefined : context.getSequence();
        const unwatchOther = other == null ? undefined : tap.watch(other, () => {});
        try {
            const settings: ChoiceSettings = {
                model, sequence, promptTokens: prompt, maxTokens: 24, stop: [], temperature: 1, topP: 1, seed: 5,
                frequencyPenalty: 0, presencePenalty: 0, promptChunkSize: 512, stepBarrier: new DecodeStepBarrier(),
                signal: new AbortController().signal, onText: () => {},
                ...extra,
                logprobs: topLogprobs == null ? undefined : {topLogprobs, tap: spyTap(tap, seen), bytes}
            };
            return await generateChoice(settings);
        } finally {
            unwatchOther?.();
            other?.dispose();
            sequence.dispose();
        }
    }

    it("the reported distribution covers the whole vocabulary, sums to 1 and is sorted", async () => {
        const seen: RawDistribution[] = [];
        const outcome = await generate({}, 5, seen);
        expect(seen.length).toBeGreaterThanOrEqual(outcome.completionTokens);
        const nVocab = model.fileInfo.metadata.tokenizer!.ggml!.tokens!.length;
        for (const distribution of seen) {
            expect(distribution.length).toBe(2 * nVocab);
            let sum = 0;
            for (let index = 1; index < distribution.length; index += 2) {
                sum += distribution[index];
                if (index > 1)
                    expect(distribution[index]).toBeLessThanOrEqual(distribution[index - 2]);
            }
            expect(sum).toBeCloseTo(1, 4);
        }
        expect(outcome.logprobs).toHaveLength(outcome.completionTokens);
        for (const entry of outcome.logprobs!) {
            expect(entry.topLogprobs).toHaveLength(5);
            expect(entry.logprob).toBeLessThanOrEqual(entry.topLogprobs[0].logprob);
        }
    });

    it("the sampled token's logprob equals an independent evaluation of the same prefix", async () => {
        const outcome = await generate({}, 2);
        expect(outcome.logprobs!.length).toBeGreaterThan(3);
        for (const at of [0, 1, 3]) {
            const sequence = context.getSequence();
            try {
                const prefix = [...prompt, ...reTokenized(outcome, at)];
                const tokens = sequence.evaluateWithMetadata(prefix, {probabilities: true}, {temperature: 0, yieldEogToken: true});
                const first = (await tokens.next()).value as {probabilities: Map<number, number>};
                await tokens.return(undefined);
                const sampledBytes = outcome.logprobs![at].bytes;
                const token = [...first.probabilities.keys()].find((id) => sameBytes(bytes.of(id as Token), sampledBytes))!;
                expect(Math.log(first.probabilities.get(token)!)).toBeCloseTo(outcome.logprobs![at].logprob, 3);
                const [top] = first.probabilities;
                expect(Math.log(top[1])).toBeCloseTo(outcome.logprobs![at].topLogprobs[0].logprob, 3);
            } finally {
                sequence.dispose();
            }
        }
    });

    it("temperature 0: every chosen token is the top-1", async () => {
        const outcome = await generate({temperature: 0}, 3);
        for (const entry of outcome.logprobs!) {
            expect(entry.token).toBe(entry.topLogprobs[0].token);
            expect(entry.logprob).toBe(entry.topLogprobs[0].logprob);
        }
    });

    it.each([
        ["temperature 1", {}],
        ["top_p 0.9, temperature 0.7", {topP: 0.9, temperature: 0.7}],
        ["logit_bias", {tokenBias: undefined as unknown, bias: true}],
        ["penalties", {frequencyPenalty: 1.5, presencePenalty: 0.5}],
        ["stop", {stop: ["e"]}]
    ] as const)("sampling is identical with and without logprobs: %s", async (_name, extra) => {
        const settings: Partial<ChoiceSettings> = {...extra} as Partial<ChoiceSettings>;
        if ("bias" in extra)
            settings.tokenBias = createLogitBias(model, new Map([[500, 5], [testLlamaTokens.eos.id, -100], [320, -100]]));
        const without = await generate(settings, null);
        const withLogprobs = await generate(settings, 5);
        expect(withLogprobs.text).toBe(without.text);
        expect(withLogprobs.completionTokens).toBe(without.completionTokens);
        expect(withLogprobs.finishReason).toBe(without.finishReason);
        expect(withLogprobs.logprobs!.length).toBe(withLogprobs.completionTokens);
        expect(new TextDecoder().decode(Uint8Array.from(withLogprobs.logprobs!.flatMap((entry) => entry.bytes)))).toContain(withLogprobs.text.trim());
    });

    function reTokenized(outcome: Awaited<ReturnType<typeof generate>>, count: number): Token[] {
        return outcome.logprobs!.slice(0, count).map((entry) => tokenOfBytes(entry.bytes));
    }

    function tokenOfBytes(wanted: readonly number[]): Token {
        const nVocab = model.fileInfo.metadata.tokenizer!.ggml!.tokens!.length;
        for (let id = 0; id < nVocab; id++)
            if (sameBytes(bytes.of(id as Token), wanted))
                return id as Token;
        throw new Error("no token has these bytes");
    }
});

describe("logprobs through the engine", () => {
    let engine: LlamaChatEngine;
    beforeAll(async () => {
        engine = await LlamaChatEngine.load(await loadLlamaRuntime({gpu: "off"}), {
            id: "tiny", modelPath: tinyChatModelPath, contextSize: 256, threads: 1, parallel: 2, queueSize: 4
        });
    });
    afterAll(() => engine?.dispose());

    const job = (extra: Partial<ChatJob>): ChatJob => ({
        turns: [{role: "user", content: "Write json please"}], n: 2, maxTokens: 30, stop: [], jsonObject: false, jsonSchema: null,
        sampling: {temperature: 1, topP: 1, seed: 3, frequencyPenalty: 0.5, presencePenalty: 0, logitBias: new Map([[500, 3]])},
        ...extra
    });
    const run = async (extra: Partial<ChatJob>) => {
        const texts = ["", ""];
        const results: ChoiceResult[] = await (await engine.submit(job(extra), {
            signal: new AbortController().signal,
            onText: (index, text) => texts[index] += text
        })).done;
        return {results, texts};
    };

    it.each([
        ["n=2 with penalties and logit_bias", {}],
        ["json_object", {jsonObject: true}],
        ["stop", {stop: ["a"]}]
    ])("same choices with and without logprobs, one entry per token: %s", async (_name, extra) => {
        const without = await run(extra);
        const withLogprobs = await run({...extra, logprobs: 1});
        expect(withLogprobs.results.map((result) => result.text)).toEqual(without.results.map((result) => result.text));
        expect(withLogprobs.texts).toEqual(without.texts);
        for (const result of withLogprobs.results) {
            // Entries are the tokens with some text in the content: all of them, or up to the one the stop sequence cuts.
            const entries = result.logprobs!;
            expect(entries.length).toBeLessThanOrEqual(result.completionTokens);
            expect(textOf(entries).startsWith(result.text)).toBe(true);
            if (result.finishReason === "length")
                expect(textOf(entries)).toBe(result.text);
            else
                expect(textOf(entries.slice(0, -1)).length).toBeLessThan(result.text.length || 1);
        }
        expect(without.results.every((result) => result.logprobs == null)).toBe(true);
    });
});

function textOf(entries: readonly {bytes: number[]}[]) {
    return new TextDecoder().decode(Uint8Array.from(entries.flatMap((entry) => entry.bytes)));
}

function sameBytes(a: readonly number[], b: readonly number[]) {
    return a.length === b.length && a.every((byte, index) => byte === b[index]);
}

/** The tap, also collecting every distribution it reports. */
function spyTap(tap: RawDistributionTap, seen: RawDistribution[] | undefined): RawDistributionTap {
    if (seen == null)
        return tap;
    return {watch: (sequence, onSample) => tap.watch(sequence, (token, distribution, position) => {
        seen.push(distribution);
        onSample(token, distribution, position);
    })} as RawDistributionTap;
}

describe("TokenBytes on a byte-level BPE (GPT-2) vocabulary", () => {
    it("maps every piece back to its exact bytes: leading spaces, and bytes that are only part of a character", async () => {
        const llama = await loadLlamaRuntime({gpu: "off"});
        const model = await llama.loadModel({modelPath: gpt2VocabPath, vocabOnly: true});
        try {
            const bytes = new TokenBytes(model);
            const [the] = model.tokenize(" the");
            expect(bytes.of(the)).toEqual([0x20, 0x74, 0x68, 0x65]);
            // "é" (C3 A9) and "€" (E2 82 AC): whatever the split into tokens, their bytes concatenate to the UTF-8.
            for (const text of [" café", " 5€", "日本語"]) {
                const tokens = model.tokenize(text);
                expect(tokens.flatMap((token) => [...bytes.of(token)])).toEqual([...new TextEncoder().encode(text)]);
            }
        } finally {
            await model.dispose();
        }
    });
});
