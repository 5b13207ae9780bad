import type { EmbeddingSettings } from "../../src/capabilities/embeddings/embeddingsManifest.js";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { base64ToFloat32, float32ToBase64, toEmbeddingsResponse } from "../../src/capabilities/embeddings/embeddingsResponse.js";
import { toEmbeddingsJob } from "../../src/capabilities/embeddings/toEmbeddingsJob.js";
import type { EmbeddingsEngineInfo } from "../../src/capabilities/embeddings/EmbeddingsEngine.js";
import { onnxModelSpec } from "../../src/capabilities/embeddings/onnx/onnxModelSpec.js";
import { finishVector, l2Normalize, poolHiddenStates, splitRows } from "../../src/capabilities/embeddings/onnx/pooling.js";
import { planBatches } from "../../src/runtimes/onnx/planBatches.js";
import { loadServedManifest } from "../../src/capabilities/loadServedManifest.js";
import { ApiError } from "../../src/core/http/ApiError.js";

const norm = (vector: ArrayLike<number>) => Math.hypot(...Array.from(vector));

describe("pooling and normalisation", () => {
    // batch 2, sequence 3, hidden 2; the second row has one real token and two padding positions.
    const hidden = Float32Array.from([1, 2, 3, 4, 5, 6, 7, 8, 100, 100, 100, 100]);

    it("mean pooling averages only the real tokens", () => {
        const [first, second] = poolHiddenStates(hidden, [2, 3, 2], [3, 1], "mean");
        expect(Array.from(first)).toEqual([3, 4]);
        expect(Array.from(second)).toEqual([7, 8]);
    });

    it("cls pooling takes the first token", () => {
        expect(poolHiddenStates(hidden, [2, 3, 2], [3, 1], "cls").map((vector) => Array.from(vector))).toEqual([[1, 2], [7, 8]]);
    });

    it("rejects a shape that does not match", () => {
        expect(() => poolHiddenStates(hidden, [3, 2, 2], [1, 1], "mean")).toThrow();
    });

    it("splits an already pooled output", () => {
        expect(splitRows(Float32Array.from([1, 2, 3, 4]), [2, 2]).map((vector) => Array.from(vector))).toEqual([[1, 2], [3, 4]]);
    });

    it("normalises to unit length and leaves a zero vector alone", () => {
        expect(Array.from(l2Normalize(Float32Array.from([3, 4])))).toEqual([0.6000000238418579, 0.800000011920929]);
        expect(Array.from(l2Normalize(new Float32Array(3)))).toEqual([0, 0, 0]);
    });

    it("truncates for Matryoshka, then re-normalises", () => {
        const vector = l2Normalize(Float32Array.from([3, 4, 12]));
        const short = finishVector(vector, {dimensions: 2, normalize: true});
        expect(short.length).toBe(2);
        expect(norm(short)).toBeCloseTo(1, 6);
        expect(short[0] / short[1]).toBeCloseTo(0.75, 6);
        expect(Array.from(finishVector(Float32Array.from([3, 4, 12]), {dimensions: 2, normalize: false}))).toEqual([3, 4]);
        expect(finishVector(vector, {dimensions: null, normalize: true}).length).toBe(3);
    });

    it("plans batches by length, bounded in size and padded tokens", () => {
        expect(planBatches([5, 1, 3, 2], 2, 1000)).toEqual([[1, 3], [2, 0]]);
        expect(planBatches([10, 10, 10], 8, 20)).toEqual([[0, 1], [2]]);
        // One input longer than the token budget still gets a batch of its own.
        expect(planBatches([50, 1], 8, 20)).toEqual([[1], [0]]);
        expect(planBatches([], 8, 20)).toEqual([]);
    });
});

describe("base64 encoding", () => {
    it("is little-endian float32 and round-trips exactly", () => {
        const vector = Float32Array.from([1, -0.5, 0.1, 3.4028234663852886e38]);
        const text = float32ToBase64(vector);
        expect(Buffer.from(text, "base64")).toEqual(Buffer.from([0, 0, 128, 63, 0, 0, 0, 191, 205, 204, 204, 61, 255, 255, 127, 127]));
        expect(base64ToFloat32(text)).toEqual(vector);
    });

    it("the response carries index, model and usage", () => {
        const response = toEmbeddingsResponse("m", [Float32Array.from([0.5]), Float32Array.from([1])], 7, "float");
        expect(response).toEqual({
            object: "list", model: "m", usage: {prompt_tokens: 7, total_tokens: 7},
            data: [{object: "embedding", index: 0, embedding: [0.5]}, {object: "embedding", index: 1, embedding: [1]}]
        });
        expect(toEmbeddingsResponse("m", [Float32Array.from([0.5])], 1, "base64").data[0].embedding).toBe("AAAAPw==");
    });
});

describe("toEmbeddingsJob", () => {
    const info: EmbeddingsEngineInfo = {id: "m", maxInputTokens: 4, dimensions: 8, vocabularySize: 10, matryoshka: false, normalize: true};
    const errorOf = (request: Record<string, unknown>, engine = info) => {
        try {
            toEmbeddingsJob({model: "m", ...request} as never, engine);
        } catch (error) {
            expect(error).toBeInstanceOf(ApiError);
            return error as ApiError;
        }
        throw new Error("accepted");
    };

    it("maps the four input forms with a param per input", () => {
        expect(toEmbeddingsJob({model: "m", input: "a"}, info)).toEqual({inputs: ["a"], params: ["input"], dimensions: null, encodingFormat: "float"});
        expect(toEmbeddingsJob({model: "m", input: ["a", "b"]}, info).params).toEqual(["input[0]", "input[1]"]);
        expect(toEmbeddingsJob({model: "m", input: [1, 2]}, info).inputs).toEqual([[1, 2]]);
        expect(toEmbeddingsJob({model: "m", input: [[1], [2, 3]], encoding_format: "base64"}, info)).toMatchObject({inputs: [[1], [2, 3]], encodingFormat: "base64"});
    });

    it.each([
        [{input: ""}, "input"],
        [{input: []}, "input"],
        [{input: ["a", ""]}, "input[1]"],
        [{input: [[1], []]}, "input[1]"],
        [{input: [1, 10]}, "input[1]"],
        [{input: [[1, 2, 3, 4, 5]]}, "input[0]"],
        [{input: [1, 2, 3, 4, 5]}, "input"],
        [{input: [true]}, "input[0]"],
        [{input: Array.from({length: 2049}, () => "a")}, "input"],
        [{input: "a", dimensions: 4}, "dimensions"]
    ])("%j is refused naming %s", (request, param) => {
        expect(errorOf(request).param).toBe(param);
    });

    it("checks dimensions against the model's Matryoshka sizes", () => {
        expect(toEmbeddingsJob({model: "m", input: "a", dimensions: 4}, {...info, matryoshka: true}).dimensions).toBe(4);
        expect(errorOf({input: "a", dimensions: 9}, {...info, matryoshka: true}).param).toBe("dimensions");
        expect(toEmbeddingsJob({model: "m", input: "a", dimensions: 4}, {...info, matryoshka: [4, 8]}).dimensions).toBe(4);
        expect(errorOf({input: "a", dimensions: 5}, {...info, matryoshka: [4, 8]}).message).toContain("4, 8");
    });
});

describe("manifest fields of embeddings models", () => {
    let dir: string;
    beforeEach(() => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "embed-manifest-"));
        fs.mkdirSync(path.join(dir, "m", "onnx"), {recursive: true});
        fs.writeFileSync(path.join(dir, "m", "onnx", "model_quantized.onnx"), "");
    });
    afterEach(() => fs.rmSync(dir, {recursive: true, force: true}));
    const load = (model: Record<string, unknown>) => {
        fs.writeFileSync(path.join(dir, "models.json"), JSON.stringify({models: [{id: "e", task: "embeddings", path: "m", ...model}]}));
        return loadServedManifest(path.join(dir, "models.json"))[0];
    };

    it("applies defaults: mean pooling, normalised, no Matryoshka, the model's own limit", () => {
        expect(load({}).settings).toEqual({maxInputTokens: null, pooling: "mean", normalize: true, matryoshka: false, dtype: null, onnxFile: null});
        expect(load({maxInputTokens: 8192, pooling: "cls", normalize: false, matryoshka: [64, 128], dtype: "q8"}).settings)
            .toEqual({maxInputTokens: 8192, pooling: "cls", normalize: false, matryoshka: [64, 128], dtype: "q8", onnxFile: null});
    });

    it.each([
        [{pooling: "max"}, "pooling"],
        [{matryoshka: []}, "matryoshka"],
        [{matryoshka: [0]}, "matryoshka[0]"],
        [{maxInputTokens: 0}, "maxInputTokens"],
        [{dtype: "fp8"}, "dtype"],
        [{onnxFile: "../x.onnx"}, "onnxFile"],
        [{normalise: true}, "normalise"]
    ])("%j is a manifest error naming the field", (model, field) => {
        expect(() => load(model)).toThrow(`models[0].${field}`);
    });

    it("embedding fields on a chat model are an error", () => {
        fs.writeFileSync(path.join(dir, "c.gguf"), "");
        fs.writeFileSync(path.join(dir, "models.json"), JSON.stringify({models: [{id: "c", task: "chat", path: "c.gguf", pooling: "mean"}]}));
        expect(() => loadServedManifest(path.join(dir, "models.json"))).toThrow("'models[0].pooling' applies only to models with task \"embeddings\"");
    });

    it("picks the ONNX file the folder has when the manifest names none", () => {
        const settings = load({}).settings as EmbeddingSettings;
        expect(onnxModelSpec("e", path.join(dir, "m"), settings, 1)).toMatchObject({dtype: "q8", modelFileName: null});
        expect(() => onnxModelSpec("e", path.join(dir, "m"), {...settings, dtype: "fp32"}, 1)).toThrow("model.onnx does not exist");
        expect(onnxModelSpec("e", path.join(dir, "m"), {...settings, onnxFile: "model_quantized.onnx"}, 1)).toMatchObject({dtype: "fp32", modelFileName: "model_quantized"});
    });
});
