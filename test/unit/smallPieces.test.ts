import { describe, expect, it } from "vitest";
import { toChunk, toUsage, type CompletionEnvelope } from "../../src/capabilities/chat/chatResponses.js";
import type { ChoiceResult } from "../../src/capabilities/chat/ChatEngine.js";
import { choiceSeed } from "../../src/capabilities/chat/shared/choiceSeed.js";
import { isLoopbackHost } from "../../src/server/isLoopbackHost.js";

describe("choiceSeed", () => {
    const isUint32 = (value: number) => Number.isInteger(value) && value >= 0 && value <= 0xFFFFFFFF;

    it("returns a uint32 for every seed, huge and negative ones included", () => {
        const seeds = [0, 1, 42, 2 ** 32 - 1, 2 ** 32, 2 ** 48, Number.MAX_SAFE_INTEGER, -1, -(2 ** 40), -Number.MAX_SAFE_INTEGER];
        for (const seed of seeds)
            for (const index of [0, 1, 7])
                expect(isUint32(choiceSeed(seed, index)), `seed ${seed}, index ${index}`).toBe(true);
    });

    it("is deterministic", () => {
        expect(choiceSeed(12345, 0)).toBe(choiceSeed(12345, 0));
        expect(choiceSeed(-7, 3)).toBe(choiceSeed(-7, 3));
        expect(choiceSeed(Number.MAX_SAFE_INTEGER, 1)).toBe(choiceSeed(Number.MAX_SAFE_INTEGER, 1));
    });

    it("gives each choice of one seed its own value", () => {
        const values = [0, 1, 2, 3, 4, 5, 6, 7].map((index) => choiceSeed(99, index));
        expect(new Set(values).size).toBe(values.length);
    });

    it("choice 1 of seed s is not choice 0 of seed s+1", () => {
        for (let seed = 0; seed < 200; seed++)
            expect(choiceSeed(seed, 1), `seed ${seed}`).not.toBe(choiceSeed(seed + 1, 0));
    });

    it("seeds that differ only above bit 32 (or in sign) give different values", () => {
        expect(choiceSeed(5 + 2 ** 32, 0)).not.toBe(choiceSeed(5, 0));
        expect(choiceSeed(2 ** 40, 0)).not.toBe(choiceSeed(0, 0));
        expect(choiceSeed(-5, 0)).not.toBe(choiceSeed(5, 0));
        expect(choiceSeed(Number.MAX_SAFE_INTEGER, 0)).not.toBe(choiceSeed(Number.MAX_SAFE_INTEGER - 1, 0));
    });

    it("spreads consecutive seeds over the whole uint32 range", () => {
        const values = Array.from({length: 1000}, (_, seed) => choiceSeed(seed, 0));
        expect(new Set(values).size).toBe(values.length);
        expect(values.filter((value) => value >= 2 ** 31).length).toBeGreaterThan(400);
        expect(values.filter((value) => value >= 2 ** 31).length).toBeLessThan(600);
    });
});

describe("isLoopbackHost", () => {
    it.each(["127.0.0.1", "127.5.5.5", "localhost", "LocalHost", "::1", "[::1]", "::ffff:127.0.0.1", "[::ffff:127.0.0.1]"])(
        "%s is loopback", (host) => {
            expect(isLoopbackHost(host)).toBe(true);
        });

    it.each(["0.0.0.0", "::", "[::]", "192.168.1.1", "10.0.0.1", "::ffff:192.168.1.1", "example.com", "localhost.example.com",
        "127.0.0.1.example.com", "", "128.0.0.1"])(
        "%s is not loopback", (host) => {
            expect(isLoopbackHost(host)).toBe(false);
        });
});

describe("chatResponses", () => {
    const envelope: CompletionEnvelope = {id: "chatcmpl-abc", created: 1_700_000_000, model: "tiny-chat", systemFingerprint: "fp_123"};
    const choice = (index: number, completionTokens: number, text = `text ${index}`): ChoiceResult =>
        ({index, text, finishReason: index % 2 === 0 ? "stop" : "length", completionTokens});

    it("usage sums the completion tokens of all choices", () => {
        expect(toUsage(10, [choice(0, 3), choice(1, 4), choice(2, 5)])).toEqual({prompt_tokens: 10, completion_tokens: 12, total_tokens: 22});
        expect(toUsage(7, [])).toEqual({prompt_tokens: 7, completion_tokens: 0, total_tokens: 7});
    });

    it("a chunk carries the envelope and one choice", () => {
        const delta = {index: 1, delta: {content: "Hi"}, logprobs: null, finish_reason: null};
        expect(toChunk(envelope, delta)).toEqual({
            id: "chatcmpl-abc",
            object: "chat.completion.chunk",
            created: 1_700_000_000,
            model: "tiny-chat",
            system_fingerprint: "fp_123",
            choices: [delta]
        });
    });

    it("a chunk has a usage field only when one is given", () => {
        const delta = {index: 0, delta: {}, logprobs: null, finish_reason: "stop" as const};
        expect("usage" in toChunk(envelope, delta)).toBe(false);
        expect(JSON.parse(JSON.stringify(toChunk(envelope, delta)))).not.toHaveProperty("usage");
        // stream_options.include_usage: every chunk says usage null, the last one has the numbers and no choices.
        expect(toChunk(envelope, delta, null)).toHaveProperty("usage", null);
        const usage = {prompt_tokens: 1, completion_tokens: 2, total_tokens: 3};
        const last = toChunk(envelope, null, usage);
        expect(last.choices).toEqual([]);
        expect(last.usage).toEqual(usage);
    });
});
