import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LlamaContext, LlamaContextSequence, LlamaModel, Token } from "node-llama-cpp";
import { promptEcho } from "../../src/capabilities/chat/llama/promptEcho.js";
import { rawPromptTokens } from "../../src/capabilities/chat/llama/rawPromptTokens.js";
import { RawDistributionTap } from "../../src/capabilities/chat/llama/RawDistributionTap.js";
import { TokenBytes } from "../../src/capabilities/chat/llama/TokenBytes.js";
import { loadLlamaRuntime } from "../../src/runtimes/llama/llamaRuntime.js";
import { tinyPlainModelPath } from "../support/testModels.js";

// The echoed prompt of /v1/completions: text offsets, and logprobs read at every prompt position.
describe("promptEcho", () => {
    let model: LlamaModel;
    let context: LlamaContext;
    let tap: RawDistributionTap;
    let bytes: TokenBytes;
    let sequence: LlamaContextSequence;
    beforeAll(async () => {
        const llama = await loadLlamaRuntime({gpu: "off"});
        model = await llama.loadModel({modelPath: tinyPlainModelPath});
        context = await model.createContext({contextSize: 256, sequences: 1, threads: 1});
        tap = RawDistributionTap.install(context, model);
        bytes = new TokenBytes(model);
        sequence = context.getSequence();
    });
    afterAll(async () => {
        await context?.dispose();
        await model?.dispose();
    });

    const text = "The cat sat on the mat, and the dog ran to the park. Then they ate \u00e9clairs \u{1F600}.";
    const echo = (chunkSize: number, signal = new AbortController().signal) => {
        const {tokens, clientStart} = rawPromptTokens(model, {prompt: text});
        return promptEcho({model, tokens, clientStart, text, logprobs: {topLogprobs: 3, bytes, tap, sequence, chunkSize, signal}});
    };

    it("offsets: each token's text starts where the text before it ends", async () => {
        const result = await echo(512);
        expect(result.text).toBe(text);
        const tokens = result.tokens!;
        expect(tokens[0].offset).toBe(0);
        for (let index = 1; index < tokens.length; index++)
            expect(tokens[index].offset).toBeGreaterThanOrEqual(tokens[index - 1].offset);
        // Where a token is whole text, it is there in the text at its offset.
        for (const token of tokens.slice(1))
            if (!token.token.includes("\uFFFD"))
                expect(text.slice(token.offset).startsWith(token.token)).toBe(true);
    });

    // Batches of other sizes round differently (float32 kernels), so equal to 2 decimals; a position read out of order
    // would be off by whole units and have other alternatives.
    it("the same logprobs whatever the evaluation chunks (every position is read, in order)", async () => {
        const whole = (await echo(512)).tokens!;
        const chunked = (await echo(5)).tokens!;
        const single = (await echo(1)).tokens!;
        expect(whole[0].logprob).not.toBeNull(); // after the BOS the server put first
        for (const other of [chunked, single]) {
            expect(other.map((token) => token.token)).toEqual(whole.map((token) => token.token));
            other.forEach((token, index) => {
                expect(token.logprob).toBeCloseTo(whole[index].logprob!, 2);
                expect(token.topLogprobs!.map((top) => top.token)).toEqual(whole[index].topLogprobs!.map((top) => top.token));
            });
        }
    });

    it("token ids with nothing before them: the first has no logprob", async () => {
        const tokens = model.tokenize("The cat sat");
        const result = await promptEcho({
            model, tokens, clientStart: 0, text: null,
            logprobs: {topLogprobs: 1, bytes, tap, sequence, chunkSize: 512, signal: new AbortController().signal}
        });
        expect(result.text).toBe("The cat sat");
        expect(result.tokens![0]).toMatchObject({logprob: null, topLogprobs: null, offset: 0});
        expect(result.tokens!.slice(1).every((token) => typeof token.logprob === "number")).toBe(true);
    });

    it("an aborted request stops between chunks", async () => {
        const controller = new AbortController();
        controller.abort(new Error("client went away"));
        await expect(echo(5, controller.signal)).rejects.toThrow("client went away");
    });

    it("without logprobs only the text: the string as sent, or the detokenized ids", async () => {
        const {tokens, clientStart} = rawPromptTokens(model, {prompt: [1, ...model.tokenize("a dog")] as number[]});
        expect(clientStart).toBe(0);
        expect(await promptEcho({model, tokens: tokens as Token[], clientStart, text: null})).toEqual({text: "a dog"});
    });
});
