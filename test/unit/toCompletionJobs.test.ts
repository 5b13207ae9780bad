import { describe, expect, it } from "vitest";
import type { ChatEngineInfo } from "../../src/capabilities/chat/ChatEngine.js";
import { completionSchema } from "../../src/capabilities/chat/completions/completionSchema.js";
import type { CompletionRequest } from "../../src/capabilities/chat/completions/CompletionWire.js";
import { toCompletionJobs } from "../../src/capabilities/chat/completions/toCompletionJobs.js";
import { ApiError } from "../../src/core/http/ApiError.js";
import { compileRequestValidator } from "../../src/core/validation/compileRequestValidator.js";

const engine: ChatEngineInfo = {id: "base", contextSize: 2048, vocabularySize: 1000, fingerprint: "fp_test"};
const fimEngine: ChatEngineInfo = {...engine, id: "coder", fillInTheMiddle: true};
const validate = compileRequestValidator<CompletionRequest>(completionSchema);

/** The request through the schema and the mapper, as the handler does. */
const plan = (fields: Record<string, unknown>, info = engine) => toCompletionJobs(validate({model: "base", prompt: "Hi", ...fields}), info);

/** The ApiError the schema or the mapper throws (fails the test when nothing or something else is thrown). */
function errorOf(fields: Record<string, unknown>, info = engine): ApiError {
    try {
        plan(fields, info);
    } catch (error) {
        expect(error).toBeInstanceOf(ApiError);
        return error as ApiError;
    }
    throw new Error("the request was accepted");
}

describe("toCompletionJobs defaults", () => {
    it("applies OpenAI's legacy defaults: max_tokens 16, temperature 1, n 1, no logprobs, no echo", () => {
        const result = plan({});
        expect(result).toMatchObject({n: 1, bestOf: 1, logprobs: null, echo: false});
        expect(result.jobs).toHaveLength(1);
        const [job] = result.jobs;
        expect(job).toMatchObject({turns: [], rawPrompt: {prompt: "Hi", suffix: null, echo: false}, n: 1, maxTokens: 16, stop: [], logprobs: null, tools: null});
        expect(job.sampling).toMatchObject({temperature: 1, topP: 1, frequencyPenalty: 0, presencePenalty: 0});
        expect(job.sampling.logitBias.size).toBe(0);
    });

    it("treats explicit nulls like absent fields", () => {
        const result = plan({
            suffix: null, max_tokens: null, temperature: null, top_p: null, n: null, best_of: null, stop: null, seed: null,
            frequency_penalty: null, presence_penalty: null, logit_bias: null, logprobs: null, echo: null, stream: null, stream_options: null, user: null
        });
        expect(result).toMatchObject({n: 1, bestOf: 1, logprobs: null, echo: false});
        expect(result.jobs[0]).toMatchObject({maxTokens: 16, stop: []});
    });

    it("copies what was given, 0 included", () => {
        const result = plan({
            max_tokens: 0, temperature: 0, top_p: 0.5, n: 2, stop: "\n", seed: 7, frequency_penalty: -1, presence_penalty: 2,
            logit_bias: {"5": -100, "6": 0}, logprobs: 0, echo: true
        });
        expect(result).toMatchObject({n: 2, bestOf: 2, logprobs: 0, echo: true});
        const [job] = result.jobs;
        expect(job).toMatchObject({n: 2, maxTokens: 0, stop: ["\n"], logprobs: 0, rawPrompt: {echo: true}});
        expect(job.sampling).toMatchObject({temperature: 0, topP: 0.5, seed: 7, frequencyPenalty: -1, presencePenalty: 2});
        expect([...job.sampling.logitBias]).toEqual([[5, -100]]);
    });

    it("unseeded prompts each get their own seed; a seed is shared, so equal prompts give equal texts", () => {
        const unseeded = plan({prompt: ["a", "a"]}).jobs;
        expect(unseeded[0].sampling.seed).not.toBe(unseeded[1].sampling.seed);
        const seeded = plan({prompt: ["a", "a"], seed: 5}).jobs;
        expect(seeded.map((job) => job.sampling.seed)).toEqual([5, 5]);
    });
});

describe("toCompletionJobs prompts", () => {
    it("a string, strings, token ids and token-id arrays: one job per prompt", () => {
        expect(plan({prompt: "Once"}).jobs.map((job) => job.rawPrompt!.prompt)).toEqual(["Once"]);
        expect(plan({prompt: ["a", "b", ""]}).jobs.map((job) => job.rawPrompt!.prompt)).toEqual(["a", "b", ""]);
        expect(plan({prompt: [1, 2, 999]}).jobs.map((job) => job.rawPrompt!.prompt)).toEqual([[1, 2, 999]]);
        expect(plan({prompt: [[1], [0, 2]]}).jobs.map((job) => job.rawPrompt!.prompt)).toEqual([[1], [0, 2]]);
    });

    it("refuses a missing, empty, mixed or malformed prompt naming the item", () => {
        expect(errorOf({prompt: undefined}).param).toBe("prompt");
        expect(errorOf({prompt: null}).param).toBe("prompt");
        expect(errorOf({prompt: 5}).param).toBe("prompt");
        expect(errorOf({prompt: {}}).param).toBe("prompt");
        expect(errorOf({prompt: []}).param).toBe("prompt");
        expect(errorOf({prompt: [true]}).param).toBe("prompt[0]");
        expect(errorOf({prompt: [null]}).param).toBe("prompt[0]");
        expect(errorOf({prompt: [1.5]}).param).toBe("prompt[0]");
        expect(errorOf({prompt: ["a", 1]}).param).toBe("prompt[1]");
        expect(errorOf({prompt: [1, "a"]}).param).toBe("prompt[1]");
        expect(errorOf({prompt: [1, [2]]}).param).toBe("prompt[1]");
        expect(errorOf({prompt: [[1], 2]}).param).toBe("prompt[1]");
        expect(errorOf({prompt: [[1], []]}).param).toBe("prompt[1]");
        expect(errorOf({prompt: [[1], [2, "x"]]}).param).toBe("prompt[1][1]");
        expect(errorOf({prompt: [[1], [2, 1.5]]}).param).toBe("prompt[1][1]");
    });

    it("refuses token ids outside the vocabulary naming the token", () => {
        const error = errorOf({prompt: [1, 1000]});
        expect(error.status).toBe(400);
        expect(error.param).toBe("prompt[1]");
        expect(error.message).toContain("0 to 999");
        expect(errorOf({prompt: [-1]}).param).toBe("prompt[0]");
        expect(errorOf({prompt: [[5], [3, 2 ** 40]]}).param).toBe("prompt[1][1]");
    });
});

describe("toCompletionJobs bounds: every one a 400 naming the field", () => {
    const cases: [Record<string, unknown>, string][] = [
        [{model: ""}, "model"],
        [{model: 5}, "model"],
        [{suffix: 5}, "suffix"],
        [{max_tokens: -1}, "max_tokens"],
        [{max_tokens: 1.5}, "max_tokens"],
        [{max_tokens: "16"}, "max_tokens"],
        [{temperature: -0.1}, "temperature"],
        [{temperature: 2.1}, "temperature"],
        [{top_p: 1.1}, "top_p"],
        [{top_p: -1}, "top_p"],
        [{n: 0}, "n"],
        [{n: 21}, "n"],
        [{n: 1.5}, "n"],
        [{best_of: 0}, "best_of"],
        [{best_of: 21}, "best_of"],
        [{n: 3, best_of: 2}, "best_of"],
        [{best_of: 2, stream: true}, "best_of"],
        [{stop: ""}, "stop"],
        [{stop: ["a", "b", "c", "d", "e"]}, "stop"],
        [{stop: ["a", ""]}, "stop[1]"],
        [{stop: 5}, "stop"],
        [{seed: 1.5}, "seed"],
        [{seed: 2 ** 60}, "seed"],
        [{frequency_penalty: 2.5}, "frequency_penalty"],
        [{frequency_penalty: -2.5}, "frequency_penalty"],
        [{presence_penalty: 3}, "presence_penalty"],
        [{logit_bias: {"5": 101}}, "logit_bias.5"],
        [{logit_bias: {"5": -101}}, "logit_bias.5"],
        [{logit_bias: {"abc": 1}}, "logit_bias.abc"],
        [{logit_bias: {"1000": 1}}, "logit_bias.1000"],
        [{logprobs: -1}, "logprobs"],
        [{logprobs: 6}, "logprobs"],
        [{logprobs: true}, "logprobs"],
        [{echo: "yes"}, "echo"],
        [{stream: 1}, "stream"],
        [{stream_options: {include_usage: true}}, "stream_options"],
        [{stream: true, stream_options: {include_usage: "yes"}}, "stream_options.include_usage"],
        [{user: "u".repeat(513)}, "user"],
        [{suffix: "end"}, "suffix"]
    ];
    it.each(cases)("%j -> param %s", (fields, param) => {
        const error = errorOf(fields);
        expect(error.status).toBe(400);
        expect(error.type).toBe("invalid_request_error");
        expect(error.param).toBe(param);
    });

    it("accepts the bounds themselves", () => {
        expect(() => plan({
            max_tokens: 0, temperature: 2, top_p: 0, n: 20, best_of: 20, stop: ["a", "b", "c", "d"], frequency_penalty: -2, presence_penalty: 2,
            logit_bias: {"999": 100, "0": -100}, logprobs: 5, seed: -(2 ** 53 - 1)
        })).not.toThrow();
    });
});

describe("toCompletionJobs best_of, suffix, echo", () => {
    it("best_of > n generates best_of candidates and asks the engine for logprobs to rank them", () => {
        const result = plan({best_of: 3, n: 2});
        expect(result).toMatchObject({n: 2, bestOf: 3, logprobs: null});
        expect(result.jobs[0]).toMatchObject({n: 3, logprobs: 0});
        expect(plan({best_of: 3, logprobs: 4}).jobs[0].logprobs).toBe(4);
        expect(plan({best_of: 2, n: 2, stream: true}).jobs[0]).toMatchObject({n: 2, logprobs: null});
    });

    it("suffix: fill in the middle on a model with FIM tokens, a 400 naming suffix elsewhere; empty means none", () => {
        expect(plan({suffix: "end"}, fimEngine).jobs[0].rawPrompt).toEqual({prompt: "Hi", suffix: "end", echo: false});
        const error = errorOf({suffix: "end"});
        expect(error.code).toBe("unsupported_parameter");
        expect(error.message).toContain("'base'");
        expect(plan({suffix: ""}).jobs[0].rawPrompt!.suffix).toBeNull();
    });

    it("echo cannot go with suffix", () => {
        expect(errorOf({suffix: "end", echo: true}, fimEngine).param).toBe("echo");
    });
});
