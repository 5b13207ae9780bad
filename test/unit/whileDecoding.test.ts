import type { LlamaContext } from "node-llama-cpp";
import { describe, expect, it } from "vitest";
import { WhileDecoding } from "../../src/capabilities/chat/llama/WhileDecoding.js";

/** A stand-in for node-llama-cpp's context: only the native `decodeBatch` WhileDecoding wraps. */
function fakeContext() {
    const calls: string[] = [];
    const decoding = Promise.resolve();
    const context = {_ctx: {
        decodeBatch: () => {
            calls.push("decodeBatch");
            return decoding;
        },
        getContextSize: () => 4096
    }};
    return {context, calls, decoding, asContext: context as unknown as LlamaContext};
}

describe("WhileDecoding", () => {
    it("runs deferred work right after the next decode is handed to llama.cpp, once", () => {
        const {context, calls, decoding, asContext} = fakeContext();
        const whileDecoding = WhileDecoding.install(asContext);
        const settle = whileDecoding.defer(() => calls.push("text"));
        expect(calls).toEqual([]);

        expect(context._ctx.decodeBatch()).toBe(decoding);
        expect(calls).toEqual(["decodeBatch", "text"]);
        settle();
        context._ctx.decodeBatch();
        expect(calls).toEqual(["decodeBatch", "text", "decodeBatch"]);
    });

    it("the owner runs it at once when no decode has come, and a later decode does not run it again", () => {
        const {context, calls, asContext} = fakeContext();
        const whileDecoding = WhileDecoding.install(asContext);
        const settle = whileDecoding.defer(() => calls.push("text"));
        settle();
        expect(calls).toEqual(["text"]);
        context._ctx.decodeBatch();
        expect(calls).toEqual(["text", "decodeBatch"]);
    });

    it("an error of deferred work reaches its owner, not node-llama-cpp's decode", () => {
        const {context, decoding, asContext} = fakeContext();
        const whileDecoding = WhileDecoding.install(asContext);
        const settle = whileDecoding.defer(() => {
            throw new Error("client gone");
        });
        const other: string[] = [];
        whileDecoding.defer(() => other.push("still runs"));
        expect(context._ctx.decodeBatch()).toBe(decoding);
        expect(other).toEqual(["still runs"]);
        expect(settle).toThrow("client gone");
        expect(settle).toThrow("client gone");
    });

    it("leaves the context's other native methods as they were", () => {
        const {context, asContext} = fakeContext();
        WhileDecoding.install(asContext);
        expect(context._ctx.getContextSize()).toBe(4096);
    });

    it("refuses a node-llama-cpp whose context has no native decodeBatch", () => {
        expect(() => WhileDecoding.install({_ctx: {}} as unknown as LlamaContext)).toThrow(/decodeBatch/);
    });
});
