import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Token } from "node-llama-cpp";
import { SequencePrefixCache } from "../../src/capabilities/chat/llama/SequencePrefixCache.js";
import { promptChunks, wholeChunkTokens } from "../../src/capabilities/chat/llama/promptChunks.js";
import { toUsage } from "../../src/capabilities/chat/chatResponses.js";
import type { ChoiceResult } from "../../src/capabilities/chat/ChatEngine.js";
import { systemFingerprint } from "../../src/runtimes/llama/systemFingerprint.js";
import { tinyChatModelPath } from "../support/testModels.js";

type FakeSequence = {name: string, contextTokens: Token[]};
const tokens = (...ids: number[]) => ids as Token[];
const sequence = (name: string, ...ids: number[]): FakeSequence => ({name, contextTokens: tokens(...ids)});

describe("SequencePrefixCache", () => {
    it("gives the free sequence sharing the longest prefix, and keeps at least the last prompt token to evaluate", () => {
        const [a, b, c] = [sequence("a", 1, 2, 9), sequence("b", 1, 2, 3, 4, 5), sequence("c")];
        const cache = new SequencePrefixCache([a, b, c], "on", 512, 1);
        expect(cache.take(tokens(1, 2, 3, 7), 1)).toEqual([{sequence: b, kept: 3}]);
        // The whole prompt is held by b: all but its last token are kept.
        cache.giveBack(b, 0);
        expect(cache.take(tokens(1, 2, 3, 4), 1)).toEqual([{sequence: b, kept: 3}]);
    });

    it("breaks ties by least recent use, and n > 1 takes the best sequences in order", () => {
        const [a, b, c] = [sequence("a", 5), sequence("b", 5), sequence("c", 1, 2)];
        const cache = new SequencePrefixCache([a, b, c], "on", 512, 1);
        // a and b both share nothing with [1, 2, 3]; a was used least recently.
        expect(cache.take(tokens(1, 2, 3), 2).map(({sequence, kept}) => [sequence.name, kept])).toEqual([["c", 2], ["a", 0]]);
        cache.giveBack(a, 0);
        cache.giveBack(c, 0);
        // b (never used since start) is now the least recently used of the ties.
        expect(cache.take(tokens(9), 1)[0].sequence).toBe(b);
    });

    it("a few shared tokens (a template's opening) do not win over a sequence holding less: another conversation is not pushed out for them", () => {
        const opening = Array.from({length: 9}, (_, index) => 100 + index);
        const [held, empty] = [sequence("held", ...opening, ...Array.from({length: 400}, (_, index) => 1000 + index)), sequence("empty")];
        const cache = new SequencePrefixCache([held, empty], "on", 512);
        cache.giveBack(held, 0);
        // Another conversation with the same 9-token opening: the empty sequence, not the one holding a conversation.
        expect(cache.take(tokens(...opening, 7, 7, 7), 1)).toEqual([{sequence: empty, kept: 0}]);
        cache.giveBack(empty, 0);
        // The same conversation again (its 409 tokens shared): its own sequence.
        expect(cache.take(held.contextTokens.slice(0, 300), 1)).toEqual([{sequence: held, kept: 299}]);
        cache.giveBack(held, 0);
        // A short prompt shared whole counts, however short.
        expect(cache.take(tokens(...opening.slice(0, 5)), 1)).toEqual([{sequence: held, kept: 4}]);
    });

    it("off: nothing is kept, sequences in least-recently-used order", () => {
        const [a, b] = [sequence("a", 1, 2, 3), sequence("b", 1, 2, 3)];
        const cache = new SequencePrefixCache([a, b], "off", 512, 1);
        expect(cache.take(tokens(1, 2, 3, 4), 1)).toEqual([{sequence: a, kept: 0}]);
        cache.giveBack(a, 3);
        expect(cache.take(tokens(1, 2, 3, 4), 1)).toEqual([{sequence: b, kept: 0}]);
    });

    it("exact: keeps only whole chunks of the grid that the sequence evaluated whole", () => {
        const held = Array.from({length: 10}, (_, index) => index + 1);
        const s = sequence("s", ...held);
        const cache = new SequencePrefixCache([s], "exact", 4, 1);
        // Never given back with whole chunks (start of the server): nothing is exact.
        expect(cache.take(tokens(...held), 1)[0].kept).toBe(0);
        cache.giveBack(s, 8);
        // 10 shared, at most 9 (last token) -> 8 on the grid of 4, and 8 were evaluated whole.
        expect(cache.take(tokens(...held, 11), 1)[0].kept).toBe(8);
        cache.giveBack(s, 4);
        expect(cache.take(tokens(...held, 11), 1)[0].kept).toBe(4);
        cache.giveBack(s, 8);
        // A prompt equal to the 8 held tokens: its last token is evaluated again, so only the chunk before it is kept.
        expect(cache.take(tokens(...held.slice(0, 8)), 1)[0].kept).toBe(4);
    });

    it("lists the free sequences most recently used first, with what each evaluated in whole chunks (what is saved to disk at an unload)", () => {
        const [a, b, c] = [sequence("a", 1), sequence("b", 2), sequence("c", 3)];
        const cache = new SequencePrefixCache([a, b, c], "on", 4, 1);
        const [taken] = cache.take(tokens(2, 5), 1);
        expect(taken.sequence).toBe(b);
        expect(cache.recentFirst().map(({sequence}) => sequence.name)).toEqual(["c", "a"]);
        cache.giveBack(b, 8);
        expect(cache.recentFirst()).toEqual([{sequence: b, wholeChunkTokens: 8}, {sequence: c, wholeChunkTokens: 0}, {sequence: a, wholeChunkTokens: 0}]);
    });

    it("counts lookups, hits and tokens for /health", () => {
        const cache = new SequencePrefixCache([sequence("a")], "on", 512, 1);
        cache.record(100, 0);
        cache.record(120, 99);
        expect(cache.stats()).toEqual({mode: "on", lookups: 2, hits: 1, promptTokens: 220, cachedTokens: 99});
    });
});

describe("promptChunks", () => {
    it("cuts a prompt on a grid fixed from its start, the last chunk being the remainder", () => {
        expect(promptChunks(10, 0, 4)).toEqual([{start: 0, end: 4}, {start: 4, end: 8}, {start: 8, end: 10}]);
        expect(promptChunks(8, 0, 4)).toEqual([{start: 0, end: 4}, {start: 4, end: 8}]);
        expect(promptChunks(3, 0, 4)).toEqual([{start: 0, end: 3}]);
    });

    it("a reused prefix removes what it covers and nothing moves: same boundaries as a miss", () => {
        expect(promptChunks(10, 4, 4)).toEqual([{start: 4, end: 8}, {start: 8, end: 10}]);
        expect(promptChunks(10, 5, 4)).toEqual([{start: 5, end: 8}, {start: 8, end: 10}]);
        expect(promptChunks(10, 9, 4)).toEqual([{start: 9, end: 10}]);
        expect(() => promptChunks(10, 10, 4)).toThrow(RangeError);
    });

    it("wholeChunkTokens: the prompt tokens that went in whole chunks", () => {
        expect(wholeChunkTokens(10, 4)).toBe(8);
        expect(wholeChunkTokens(3, 4)).toBe(0);
        expect(wholeChunkTokens(8, 4)).toBe(8);
    });
});

describe("usage.prompt_tokens_details.cached_tokens", () => {
    const choice = (index: number, cachedPromptTokens?: number): ChoiceResult =>
        ({index, text: "", finishReason: "stop", completionTokens: 2, cachedPromptTokens});

    it("reports the prompt tokens every choice reused (the prompt is counted once)", () => {
        expect(toUsage(50, [choice(0, 40), choice(1, 12)])).toEqual({
            prompt_tokens: 50, completion_tokens: 4, total_tokens: 54, prompt_tokens_details: {cached_tokens: 12}
        });
        expect(toUsage(50, [choice(0, 0)]).prompt_tokens_details).toEqual({cached_tokens: 0});
    });

    it("is left out when the engine has no prompt cache to report", () => {
        expect(toUsage(50, [choice(0)])).toEqual({prompt_tokens: 50, completion_tokens: 2, total_tokens: 52});
    });
});

describe("system_fingerprint follows flash attention and the llama.cpp binary", () => {
    const inputs = {
        serverVersion: "1", nodeLlamaCppVersion: "3.21.1", llamaCppRelease: "ggml-org/llama.cpp@v0.4.0", backend: "cpu:prebuilt",
        binary: "prebuilt cpu (zen4)", modelPath: tinyChatModelPath, contextSize: 256, threads: 1, flashAttention: true as boolean | "auto"
    };

    it("is stable for the same inputs and changes when either changes", () => {
        const base = systemFingerprint(inputs);
        expect(systemFingerprint({...inputs})).toBe(base);
        expect(systemFingerprint({...inputs, flashAttention: false})).not.toBe(base);
        expect(systemFingerprint({...inputs, binary: "native cpu (native)", backend: "cpu:localBuild"})).not.toBe(base);
        expect(systemFingerprint({...inputs, binary: "prebuilt cpu (haswell)"})).not.toBe(base);
    });

    it("follows the model file's content: a file rewritten in place (same size, a new modification time) gets another", () => {
        const folder = fs.mkdtempSync(path.join(os.tmpdir(), "los-fingerprint-"));
        try {
            const modelPath = path.join(folder, "model.gguf");
            fs.copyFileSync(tinyChatModelPath, modelPath);
            const before = systemFingerprint({...inputs, modelPath});
            expect(systemFingerprint({...inputs, modelPath})).toBe(before);
            const bytes = fs.readFileSync(modelPath);
            bytes[bytes.length - 1] ^= 0xff;
            fs.writeFileSync(modelPath, bytes);
            fs.utimesSync(modelPath, new Date(), new Date(Date.now() + 60_000));
            expect(systemFingerprint({...inputs, modelPath})).not.toBe(before);
        } finally {
            fs.rmSync(folder, {recursive: true, force: true});
        }
    });
});
