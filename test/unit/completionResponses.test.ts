import { describe, expect, it } from "vitest";
import type { ChoiceResult, TokenLogprob } from "../../src/capabilities/chat/ChatEngine.js";
import { CompletionLogprobsWriter } from "../../src/capabilities/chat/completions/CompletionLogprobsWriter.js";
import { toCompletionChunk, toTextCompletion } from "../../src/capabilities/chat/completions/completionResponses.js";
import { selectBestOf } from "../../src/capabilities/chat/completions/selectBestOf.js";

const utf8 = new TextEncoder();
const entry = (token: string, logprob: number, top: [string, number][] = [], bytes = [...utf8.encode(token)]): TokenLogprob =>
    ({token, logprob, bytes, topLogprobs: top.map(([text, value]) => ({token: text, logprob: value, bytes: [...utf8.encode(text)]}))});
const envelope = {id: "cmpl-1", created: 5, model: "m", systemFingerprint: "fp"};

describe("CompletionLogprobsWriter", () => {
    it("OpenAI's parallel arrays; top_logprobs has the alternatives plus the chosen token", () => {
        const writer = new CompletionLogprobsWriter();
        expect(writer.piece(" a cat", [entry(" a", -0.5, [[" the", -0.2], [" a", -0.5]]), entry(" cat", -1, [[" dog", -0.1]])])).toEqual({
            tokens: [" a", " cat"],
            token_logprobs: [-0.5, -1],
            top_logprobs: [{" the": -0.2, " a": -0.5}, {" dog": -0.1, " cat": -1}],
            text_offset: [0, 2]
        });
    });

    it("offsets continue across pieces and after the echo", () => {
        const writer = new CompletionLogprobsWriter();
        const echoed = writer.echo({text: "Hi there", tokens: [
            {token: " Hi", bytes: [], logprob: null, topLogprobs: null, offset: 0},
            {token: " there", bytes: [], logprob: -2, topLogprobs: [{token: " you", logprob: -1, bytes: []}], offset: 2}
        ]});
        expect(echoed).toEqual({tokens: [" Hi", " there"], token_logprobs: [null, -2], top_logprobs: [null, {" you": -1, " there": -2}], text_offset: [0, 2]});
        expect(writer.piece(" ok", [entry(" ok", -1)]).text_offset).toEqual([8]);
        expect(writer.piece("!?", [entry("!", -1), entry("?", -1)]).text_offset).toEqual([11, 12]);
    });

    it("a token that ends inside a UTF-8 character starts where the character does", () => {
        const writer = new CompletionLogprobsWriter();
        const [first, second] = [...utf8.encode("é")];
        const result = writer.piece("xé", [entry("x", -1), entry("\uFFFD", -1, [], [first]), entry("\uFFFD", -1, [], [second])]);
        expect(result.text_offset).toEqual([0, 1, 1]);
    });

    it("a leading space SentencePiece dropped from the text (BOS-only prompt) is not counted", () => {
        const writer = new CompletionLogprobsWriter();
        expect(writer.piece("Once upon", [entry(" Once", -1), entry(" upon", -1)]).text_offset).toEqual([0, 4]);
    });

    it("a token that straddles a stop sequence stays within the text", () => {
        const writer = new CompletionLogprobsWriter();
        expect(writer.piece(" a b", [entry(" a", -1), entry(" bcd", -1)]).text_offset).toEqual([0, 2]);
        expect(writer.piece("", [entry("x", -1)]).text_offset).toEqual([4]);
    });
});

describe("selectBestOf", () => {
    const choice = (index: number, logprobs: number[]): ChoiceResult =>
        ({index, text: `c${index}`, finishReason: "length", completionTokens: logprobs.length, logprobs: logprobs.map((value) => entry("t", value))});

    it("returns the n with the highest mean logprob, best first, renumbered", () => {
        const candidates = [choice(0, [-1, -1]), choice(1, [-0.1, -0.3, -0.2]), choice(2, [-3]), choice(3, [-0.5, -0.5])];
        expect(selectBestOf(candidates, 2).map((picked) => [picked.index, picked.text])).toEqual([[0, "c1"], [1, "c3"]]);
        expect(selectBestOf(candidates, 1)[0].text).toBe("c1");
    });

    it("ties keep the candidates' order; a candidate without tokens counts as certain", () => {
        expect(selectBestOf([choice(1, [-1]), choice(0, [-1])], 1)[0].text).toBe("c0");
        expect(selectBestOf([choice(0, [-0.01]), choice(1, [])], 1)[0].text).toBe("c1");
    });
});

describe("completion responses", () => {
    const result = (index: number, text: string): ChoiceResult => ({index, text, finishReason: index === 0 ? "stop" : "length", completionTokens: 2});

    it("text_completion with choices indexed prompt * n + choice, echo before the text, usage over prompts", () => {
        const completion = toTextCompletion(envelope, [
            {promptTokens: 3, echo: {text: "P0"}, choices: [result(1, " b"), result(0, " a")], completionTokens: 4},
            {promptTokens: 2, echo: {text: "P1"}, choices: [result(0, " c"), result(1, " d")], completionTokens: 6}
        ], 2, false);
        expect(completion).toEqual({
            id: "cmpl-1", object: "text_completion", created: 5, model: "m", system_fingerprint: "fp",
            choices: [
                {text: "P0 a", index: 0, logprobs: null, finish_reason: "stop"},
                {text: "P0 b", index: 1, logprobs: null, finish_reason: "length"},
                {text: "P1 c", index: 2, logprobs: null, finish_reason: "stop"},
                {text: "P1 d", index: 3, logprobs: null, finish_reason: "length"}
            ],
            usage: {prompt_tokens: 5, completion_tokens: 10, total_tokens: 15}
        });
    });

    it("a chunk has the response's shape; the usage chunk has no choices", () => {
        expect(toCompletionChunk(envelope, {text: "x", index: 0, logprobs: null, finish_reason: null}, null)).toEqual({
            id: "cmpl-1", object: "text_completion", created: 5, model: "m", system_fingerprint: "fp",
            choices: [{text: "x", index: 0, logprobs: null, finish_reason: null}], usage: null
        });
        expect(toCompletionChunk(envelope, null, {prompt_tokens: 1, completion_tokens: 2, total_tokens: 3}).choices).toEqual([]);
        expect("usage" in toCompletionChunk(envelope, null)).toBe(false);
    });
});
