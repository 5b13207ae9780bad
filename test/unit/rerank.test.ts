import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/core/http/ApiError.js";
import { relevanceScores, sigmoid } from "../../src/capabilities/rerank/onnx/relevanceScores.js";
import { toRerankResponse } from "../../src/capabilities/rerank/rerankResponse.js";
import { toRerankJob } from "../../src/capabilities/rerank/toRerankJob.js";

const refusal = (run: () => unknown) => {
    try {
        run();
    } catch (error) {
        return error instanceof ApiError ? {param: error.param, message: error.message} : error;
    }
    throw new Error("not refused");
};

describe("rerank converters (no model)", () => {
    it("toRerankJob: strings and {text} documents, top_n capped, return_documents false by default", () => {
        expect(toRerankJob({model: "m", query: "q", documents: ["a", {text: "b"}, {text: "", title: "x"}]}))
            .toEqual({query: "q", documents: ["a", "b", ""], topN: 3, returnDocuments: false});
        expect(toRerankJob({model: "m", query: "q", documents: ["a", "b"], top_n: 1, return_documents: true})).toMatchObject({topN: 1, returnDocuments: true});
        expect(toRerankJob({model: "m", query: "q", documents: ["a", "b"], top_n: 9, return_documents: null})).toMatchObject({topN: 2, returnDocuments: false});
    });

    it("toRerankJob: a document of another shape is refused naming it", () => {
        expect(refusal(() => toRerankJob({model: "m", query: "q", documents: ["a", "b", "c", 4]}))).toMatchObject({param: "documents[3]"});
        expect(refusal(() => toRerankJob({model: "m", query: "q", documents: [null]}))).toMatchObject({param: "documents[0]"});
        expect(refusal(() => toRerankJob({model: "m", query: "q", documents: [["a"]]}))).toMatchObject({param: "documents[0]"});
        expect(refusal(() => toRerankJob({model: "m", query: "q", documents: ["a", {content: "b"}]}))).toMatchObject({param: "documents[1].text"});
    });

    it("toRerankResponse: best first, ties in document order, top_n, documents on request, usage", () => {
        const job = {query: "q", documents: ["a", "b", "c", "d"], topN: 3, returnDocuments: true};
        const response = toRerankResponse("req-1", "m", job, [0.2, 0.9, 0.2, 0.5], 40);
        expect(response).toEqual({
            id: "req-1", object: "list", model: "m",
            results: [{index: 1, relevance_score: 0.9, document: {text: "b"}}, {index: 3, relevance_score: 0.5, document: {text: "d"}}, {index: 0, relevance_score: 0.2, document: {text: "a"}}],
            usage: {prompt_tokens: 40, total_tokens: 40}
        });
        expect(toRerankResponse("r", "m", {...job, returnDocuments: false, topN: 1}, [0.2, 0.9, 0.2, 0.5], 1).results).toEqual([{index: 1, relevance_score: 0.9}]);
    });

    it("relevanceScores: one label through a sigmoid, two labels the relevant one's softmax; more refused", () => {
        expect(Array.from(relevanceScores(Float32Array.of(0, 2, -2), [3, 1]))).toEqual([0.5, Math.fround(sigmoid(2)), Math.fround(sigmoid(-2))]);
        const [first, second] = relevanceScores(Float32Array.of(1, 3, 0, 0), [2, 2]);
        expect(first).toBeCloseTo(Math.exp(3) / (Math.exp(1) + Math.exp(3)), 6);
        expect(second).toBe(0.5);
        expect(() => relevanceScores(new Float32Array(6), [2, 3])).toThrow("1 or 2 labels");
        expect(sigmoid(-1000)).toBe(0);
        expect(sigmoid(1000)).toBe(1);
        expect(sigmoid(-800)).toBeGreaterThanOrEqual(0);
    });
});
