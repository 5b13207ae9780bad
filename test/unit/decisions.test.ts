import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/core/http/ApiError.js";
import { confidenceOf, decisionAnswers, decisionUsage, scoreOf } from "../../src/capabilities/chat/decisions/decisionAnswers.js";
import type { DecisionRequest, SystemOneRequest } from "../../src/capabilities/chat/decisions/DecisionsWire.js";
import { predicateOptions, toDecisionJob } from "../../src/capabilities/chat/decisions/toDecisionJob.js";
import { toSystemOneAnswers, toSystemOneRequest } from "../../src/capabilities/chat/decisions/toSystemOneRequest.js";
import { combineOrders, decisionOrders, decisionQuestionText } from "../../src/capabilities/chat/shared/decisionQuestionText.js";

// The decision routes' pure parts, without a model: requests as the engine's jobs, answers from its probabilities.
const refusal = (run: () => unknown) => {
    try {
        run();
    } catch (error) {
        expect(error).toBeInstanceOf(ApiError);
        return {param: (error as ApiError).param, message: (error as ApiError).message};
    }
    throw new Error("not refused");
};

describe("toDecisionJob", () => {
    it("turns the input into chat turns and each question into its options' text", () => {
        const request: DecisionRequest = {
            model: "m",
            input: [
                {role: "developer", content: "Be strict."},
                {role: "user", content: [{type: "input_text", text: "Order:"}, {type: "input_json", data: {id: 7}}]},
                {type: "function_call", call_id: "c1", name: "lookup", arguments: "{\"id\":7}"},
                {type: "function_call_output", call_id: "c1", output: "shipped"},
                {role: "assistant", content: [{type: "output_text", text: "It shipped."}]}
            ],
            questions: [
                {type: "predicate", instructions: "Did it ship?"},
                {type: "choice", instructions: [{type: "input_text", text: "Tone?"}], choices: [{value: "calm", description: "no anger"}, {value: true}, {value: "maybe"}]},
                {type: "score", instructions: "Urgency", levels: [{label: "low"}, {label: "high", description: "today"}]}
            ]
        };
        expect(toDecisionJob(request, 62)).toEqual({
            turns: [
                {role: "system", content: "Be strict."},
                {role: "user", content: "Order:\n{\"id\":7}"},
                {role: "assistant", content: "", toolCalls: [{name: "lookup", arguments: {id: 7}, result: "shipped"}]},
                {role: "assistant", content: "It shipped."}
            ],
            questions: [
                {instructions: "Did it ship?", options: predicateOptions},
                {instructions: "Tone?", options: ["calm: no anger", "true", "maybe"]},
                {instructions: "Urgency", options: ["low", "high: today"]}
            ]
        });
    });

    it("refuses in OpenAI's words, naming the field", () => {
        const base = {model: "m", input: "x"};
        expect(refusal(() => toDecisionJob({...base, questions: [
            {type: "predicate", instructions: "a"},
            {type: "choice", instructions: "b", choices: [{value: "x"}, {value: "y"}, {value: "x"}]}
        ]}, 62)).param).toBe("questions[1].choices[2].value");
        expect(refusal(() => toDecisionJob({...base, questions: [
            {type: "choice", instructions: "b", choices: Array.from({length: 30}, (_, index) => ({value: `v${index}`}))}
        ]}, 26)).param).toBe("questions[0].choices");
        // Options the model would read alike: a boolean and its text, a repeated level; a list its type needs, missing.
        expect(refusal(() => toDecisionJob({...base, questions: [
            {type: "choice", instructions: "b", choices: [{value: "x"}, {value: true}, {value: "true"}]}
        ]}, 62)).param).toBe("questions[0].choices[2].value");
        expect(refusal(() => toDecisionJob({...base, questions: [
            {type: "predicate", instructions: "a"}, {type: "score", instructions: "b", levels: [{label: "low"}, {label: "high"}, {label: "low"}]}
        ]}, 62)).param).toBe("questions[1].levels[2].label");
        expect(refusal(() => toDecisionJob({...base, questions: [{type: "choice", instructions: "b"} as DecisionRequest["questions"][number]]}, 62)).param).toBe("questions[0].choices");
        expect(refusal(() => toDecisionJob({...base, questions: [{type: "score", instructions: "b", choices: [{value: "x"}, {value: "y"}]} as unknown as DecisionRequest["questions"][number]]}, 62)).param)
            .toBe("questions[0].levels");
        expect(refusal(() => toDecisionJob({model: "m", input: [{role: "user", content: [{type: "input_text", text: "a"}, {type: "input_image", image_url: "data:"}]}],
            questions: [{type: "predicate", instructions: "a"}]}, 62)).param).toBe("input[0].content[1].image_url");
        expect(refusal(() => toDecisionJob({model: "m", input: [{role: "user", content: [{type: "input_text", text: "a"}, {type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="}]}],
            questions: [{type: "predicate", instructions: "a"}]}, 62)).param).toBe("input[0].content[1]");
        expect(refusal(() => toDecisionJob({model: "m", input: [{type: "function_call_output", call_id: "nope", output: "x"}],
            questions: [{type: "predicate", instructions: "a"}]}, 62)).param).toBe("input[0].call_id");
    });
});

describe("answers", () => {
    it("confidence is 1 minus the normalised entropy", () => {
        expect(confidenceOf([1, 0, 0])).toBe(1);
        expect(confidenceOf([0.25, 0.25, 0.25, 0.25])).toBeCloseTo(0, 12);
        const p = [0.7, 0.2, 0.1];
        expect(confidenceOf(p)).toBeCloseTo(1 + p.reduce((sum, x) => sum + x * Math.log(x), 0) / Math.log(3), 12);
    });

    it("a score is the probability-weighted position of the levels, 0 to 1", () => {
        expect(scoreOf([1, 0, 0])).toBe(0);
        expect(scoreOf([0, 0, 1])).toBe(1);
        expect(scoreOf([0.2, 0.3, 0.5])).toBeCloseTo(0.3 * 0.5 + 0.5, 12);
    });

    it("keeps typed choice values and names, in question order", () => {
        const answers = decisionAnswers([
            {type: "predicate", instructions: "a", name: "p"},
            {type: "choice", instructions: "b", choices: [{value: true}, {value: "true"}]},
            {type: "score", instructions: "c", levels: [{label: "lo"}, {label: "hi"}]}
        ], {probabilities: [[0.9, 0.1], [0.25, 0.75], [0.5, 0.5]], prefixTokens: 10, suffixTokens: 5, cachedTokens: 4});
        expect(answers).toEqual([
            {type: "predicate", name: "p", probability: 0.9},
            {type: "choice", name: null, choice: "true", confidence: confidenceOf([0.25, 0.75]), probabilities: [{value: true, probability: 0.25}, {value: "true", probability: 0.75}]},
            {type: "score", name: null, score: 0.5, confidence: 0, probabilities: [{label: "lo", value: 0, probability: 0.5}, {label: "hi", value: 1, probability: 0.5}]}
        ]);
        expect(decisionUsage({probabilities: [], prefixTokens: 10, suffixTokens: 5, cachedTokens: 4})).toEqual({
            input_tokens: 15, input_tokens_details: {cached_tokens: 4, cache_write_tokens: 6}, output_tokens: 0, output_tokens_details: {reasoning_tokens: 0}, total_tokens: 15
        });
    });
});

describe("position bias", () => {
    it("each question is asked in the given and the reversed order, and each option's probability averaged over both", () => {
        expect(decisionOrders(3)).toEqual([[0, 1, 2], [2, 1, 0]]);
        // A model that always says the first label: every option equally likely once averaged (2 options).
        expect(combineOrders(decisionOrders(2), [[1, 0], [1, 0]])).toEqual([0.5, 0.5]);
        // Label probabilities are normalised over the labels shown first.
        expect(combineOrders(decisionOrders(3), [[0.2, 0.2, 0.1], [0.1, 0.1, 0.3]])).toEqual([0.4 / 2 + 0.6 / 2, 0.4 / 2 + 0.2 / 2, 0.2 / 2 + 0.2 / 2]);
    });

    it("the question's text lists the options after their labels, in the order asked", () => {
        expect(decisionQuestionText({instructions: "Tone?", options: ["calm", "angry"]}, ["A", "B", "C"], [1, 0]))
            .toBe("Tone?\n\nOptions:\nA. angry\nB. calm\n\nAnswer with the label of one option (A, B) and nothing else.");
    });
});

describe("System One", () => {
    const request: SystemOneRequest = {
        model: "m",
        state: {message: "charged twice"},
        questions: {
            is_refund: {type: "noul", instructions: "Refund?", criteria: {true: "asks for money back"}},
            urgency: {type: "choice", instructions: "How urgent?", criteria: {low: "can wait", high: null}},
            frustration: {type: "score", instructions: "How frustrated?", criteria: ["calm", "annoyed", "angry"]}
        }
    };

    it("is the decision request that asks the same", () => {
        expect(toSystemOneRequest(request, 62)).toEqual({
            model: "m",
            input: JSON.stringify({message: "charged twice"}, null, 2),
            questions: [
                {type: "choice", name: "is_refund", instructions: "Refund?", choices: [{value: true, description: "asks for money back"}, {value: false, description: undefined}]},
                {type: "choice", name: "urgency", instructions: "How urgent?", choices: [{value: "low", description: "can wait"}, {value: "high", description: undefined}]},
                {type: "score", name: "frustration", instructions: "How frustrated?", levels: [{label: "calm"}, {label: "annoyed"}, {label: "angry"}]}
            ]
        });
    });

    it("answers by name: noul the probability of true, score the expected level index", () => {
        const converted = toSystemOneRequest(request, 62);
        const answers = decisionAnswers(converted.questions, {probabilities: [[0.8, 0.2], [0.3, 0.7], [0, 0.5, 0.5]], prefixTokens: 1, suffixTokens: 1, cachedTokens: 0});
        expect(toSystemOneAnswers(request, answers)).toEqual({
            is_refund: {type: "noul", noul: 0.8},
            urgency: {type: "choice", choice: "high", confidence: confidenceOf([0.3, 0.7]), probabilities: {low: 0.3, high: 0.7}},
            frustration: {type: "score", score: 1.5, confidence: confidenceOf([0, 0.5, 0.5]), probabilities: {calm: 0, annoyed: 0.5, angry: 0.5}}
        });
    });

    it("refuses criteria that do not fit, naming questions.<name>.criteria", () => {
        expect(refusal(() => toSystemOneRequest({...request, questions: {x: {type: "score", instructions: "a", criteria: {a: "b"} as never}}}, 62)).param).toBe("questions.x.criteria");
        expect(refusal(() => toSystemOneRequest({...request, questions: {x: {type: "choice", instructions: "a", criteria: {only: null}}}}, 62)).param).toBe("questions.x.criteria");
    });
});
