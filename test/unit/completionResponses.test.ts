import { describe, expect, it } from "vitest";
import type { ChoiceResult, TokenLogprob } from "../../src/capabilities/chat/ChatEngine.js";
import { CompletionLogprobsWriter } from "../../src/capabilities/chat/completions/CompletionLogprobsWriter.js";
import { completionEvents } from "../../src/capabilities/chat/completions/completionEvents.js";
import { toCompletionChunk, toCompletionsDone, toTextCompletion } from "../../src/capabilities/chat/completions/completionResponses.js";
import type { TextCompletionChunk } from "../../src/capabilities/chat/completions/CompletionWire.js";
import { finishedTextCompletion, foldCompletionChunk } from "../../src/capabilities/chat/completions/foldCompletionChunk.js";
import type { CompletionPlan } from "../../src/capabilities/chat/completions/toCompletionJobs.js";
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

describe("a completion's body is the fold of its stream", () => {
    // Two prompts, two choices each, echoed with logprobs: prompt 1's second choice generates nothing.
    const plan: CompletionPlan = {jobs: [], n: 2, bestOf: 2, logprobs: 1, echo: true};
    const echoes = [
        {text: "P0", tokens: [{token: "P0", bytes: [80, 48], logprob: null, topLogprobs: null, offset: 0}]},
        {text: "P1", tokens: [{token: "P1", bytes: [80, 49], logprob: null, topLogprobs: null, offset: 0}]}
    ];
    const pieces: [prompt: number, choice: number, text: string, entries: TokenLogprob[]][] = [
        [0, 0, " a", [entry(" a", -0.5, [[" b", -1]])]], [0, 1, " b", [entry(" b", -1, [[" a", -0.5]])]],
        [1, 0, " c", [entry(" c", -0.1)]], [0, 0, "!", [entry("!", -2)]]
    ];
    const results = [
        [{index: 0, text: " a!", finishReason: "stop", completionTokens: 2, logprobs: [...pieces[0][3], ...pieces[3][3]]}, {index: 1, text: " b", finishReason: "length", completionTokens: 1, logprobs: pieces[1][3]}],
        [{index: 0, text: " c", finishReason: "stop", completionTokens: 1, logprobs: pieces[2][3]}, {index: 1, text: "", finishReason: "length", completionTokens: 0, logprobs: []}]
    ] satisfies ChoiceResult[][];

    /** The stream of the events above, and what its converter returned at the end (asked with or without the usage chunk). */
    function run(includeUsage: boolean) {
        const chunks: TextCompletionChunk[] = [];
        const stream = completionEvents(envelope, plan, includeUsage)((data) => void chunks.push(structuredClone(data) as TextCompletionChunk));
        const hooks = [stream.hooks(0), stream.hooks(1)];
        hooks.forEach((prompt, index) => prompt.onPrompt!(echoes[index]));
        for (const [prompt, choice, text, entries] of pieces)
            hooks[prompt].onText!(choice, text, entries);
        results.forEach((choices, prompt) => choices.forEach((choice) => hooks[prompt].onFinish!(choice)));
        const done = toCompletionsDone(plan, results.map((choices) => ({promptTokens: 3, choices})), echoes);
        return {chunks, body: stream.finish(done), done};
    }

    it("equals, byte for byte, the body built from the whole choices (echo, logprobs, an empty choice's empty arrays, usage)", () => {
        const {body, done} = run(true);
        expect(JSON.stringify(body)).toBe(JSON.stringify(toTextCompletion(envelope, done.outcomes, 2, true)));
    });

    it("a client's fold of the streamed chunks gives the same body; without the usage chunk there is no body", () => {
        const {chunks, body} = run(true);
        expect(finishedTextCompletion(chunks.reduce(foldCompletionChunk, undefined)!)).toEqual(body);
        expect(run(false).body).toBeUndefined();
        // The fold keeps copies: changing a chunk afterwards changes nothing.
        const folded = chunks.reduce(foldCompletionChunk, undefined)!;
        chunks[0].choices[0].logprobs!.tokens[0] = "changed";
        expect(folded.choices[0].logprobs!.tokens[0]).toBe("P0");
    });

    it("a choice that never finished, or no usage, is an error rather than a body", () => {
        const {chunks} = run(true);
        expect(() => finishedTextCompletion(chunks.slice(0, -2).reduce(foldCompletionChunk, undefined)!)).toThrow("carried no usage");
        const unfinished = chunks.filter((chunk) => !(chunk.choices[0]?.index === 3 && chunk.choices[0].finish_reason != null)).reduce(foldCompletionChunk, undefined)!;
        expect(() => finishedTextCompletion(unfinished)).toThrow("Choice 3 of the completion never finished");
    });
});
