import fs from "node:fs";
import path from "node:path";
import { seededRandom } from "../seededRandom.js";
import { encodeModel, float, int64, node, tensor, valueInfo } from "./onnxGraphBuilder.js";
import { kokoroVocabulary } from "./kokoroVocabulary.js";

export type TestKokoroOptions = {
    seed?: number;
    /** Voice tables written to voices/<name>.bin (float32 [510, 256], random). */
    voices?: string[];
    /** Output samples per input token at speed 1. */
    samplesPerToken?: number;
};

/** Style vector width and rows of a Kokoro voice table. */
const styleWidth = 256;
const styleRows = 510;

/**
 * Writes a tiny random-weight model folder shaped like onnx-community/Kokoro-82M-v1.0-ONNX:
 * `config.json` ({"model_type": "style_text_to_speech_2"} only, like the real one), `tokenizer.json`
 * and `tokenizer_config.json` (the real phoneme vocabulary, "$" padding at both ends),
 * `onnx/model.onnx` (and the same graph as `model_quantized.onnx`, so dtype q8 finds a file) and
 * `voices/*.bin`.
 *
 * Graph: inputs `input_ids` int64 [1, n], `style` float [1, 256], `speed` float [1]; output
 * `waveform` float [samples]. Each token's embedding (Gather) plus the projected style (MatMul) goes
 * through tanh (x 0.5) to `samplesPerToken` samples; the whole sequence is then resized (linear) to
 * floor(n * samplesPerToken / speed) samples. So the output grows with the tokens, shrinks with the
 * speed, stays in (-0.5, 0.5), and depends on both the ids and the style.
 */
export function makeTestKokoroOnnx(folder: string, options: TestKokoroOptions = {}) {
    const frame = options.samplesPerToken ?? 600;
    const random = seededRandom(options.seed ?? 1);
    const floats = (count: number, scale: number) => Float32Array.from({length: count}, () => (random() * 2 - 1) * scale);
    const vocabularySize = Math.max(...Object.values(kokoroVocabulary)) + 1;

    const model = encodeModel({
        name: "test-kokoro",
        initializer: [
            tensor("embeddings", [vocabularySize, frame], floats(vocabularySize * frame, 1.5)),
            tensor("style_weight", [styleWidth, frame], floats(styleWidth * frame, 2 / Math.sqrt(styleWidth))),
            tensor("half", [], Float32Array.of(0.5)),
            tensor("flat_shape", [2], BigInt64Array.of(1n, -1n)),
            tensor("vector_shape", [1], BigInt64Array.of(-1n)),
            tensor("one", [1], BigInt64Array.of(1n)),
            tensor("length_start", [1], BigInt64Array.of(1n)),
            tensor("length_end", [1], BigInt64Array.of(2n))
        ],
        node: [
            node("Gather", ["embeddings", "input_ids"], ["embedded"], [{name: "axis", i: 0}]),
            node("MatMul", ["style", "style_weight"], ["styled"]),
            node("Add", ["embedded", "styled"], ["mixed"]),
            node("Tanh", ["mixed"], ["activated"]),
            node("Mul", ["activated", "half"], ["frames"]),
            node("Reshape", ["frames", "flat_shape"], ["flat"]),
            node("Shape", ["flat"], ["flat_dims"]),
            node("Slice", ["flat_dims", "length_start", "length_end"], ["length"]),
            node("Cast", ["length"], ["length_float"], [{name: "to", i: float}]),
            node("Div", ["length_float", "speed"], ["scaled_length"]),
            node("Floor", ["scaled_length"], ["floored_length"]),
            node("Cast", ["floored_length"], ["new_length"], [{name: "to", i: int64}]),
            node("Concat", ["one", "new_length"], ["sizes"], [{name: "axis", i: 0}]),
            node("Resize", ["flat", "", "", "sizes"], ["resized"], [{name: "mode", s: "linear"}]),
            node("Reshape", ["resized", "vector_shape"], ["waveform"])
        ],
        input: [
            valueInfo(int64, "input_ids", [1, "sequence_length"]),
            valueInfo(float, "style", [1, styleWidth]),
            valueInfo(float, "speed", [1])
        ],
        output: [valueInfo(float, "waveform", ["num_samples"])]
    });

    fs.mkdirSync(path.join(folder, "onnx"), {recursive: true});
    fs.mkdirSync(path.join(folder, "voices"), {recursive: true});
    fs.writeFileSync(path.join(folder, "onnx", "model.onnx"), model);
    fs.writeFileSync(path.join(folder, "onnx", "model_quantized.onnx"), model);
    fs.writeFileSync(path.join(folder, "config.json"), JSON.stringify({model_type: "style_text_to_speech_2"}, null, 2));
    fs.writeFileSync(path.join(folder, "tokenizer_config.json"), JSON.stringify({
        model_max_length: 512, pad_token: "$", tokenizer_class: "PreTrainedTokenizer", unk_token: "$"
    }, null, 2));
    fs.writeFileSync(path.join(folder, "tokenizer.json"), JSON.stringify(kokoroTokenizerJson()));
    for (const voice of options.voices ?? ["af_heart", "af_alloy", "am_echo", "bm_fable"]) {
        const table = floats(styleRows * styleWidth, 0.3);
        fs.writeFileSync(path.join(folder, "voices", `${voice}.bin`), new Uint8Array(table.buffer));
    }
}

/** The ONNX export's tokenizer layout: drop unknown symbols, one token per character, "$" at both ends. */
function kokoroTokenizerJson() {
    const symbols = Object.keys(kokoroVocabulary).join("").replace(/[\\\]^-]/gu, (character) => `\\${character}`);
    const pad = {SpecialToken: {id: "$", type_id: 0}};
    return {
        version: "1.0",
        truncation: null,
        padding: null,
        added_tokens: [{id: 0, content: "$", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true}],
        normalizer: {type: "Replace", pattern: {Regex: `[^${symbols}]`}, content: ""},
        pre_tokenizer: {type: "Split", pattern: {Regex: ""}, behavior: "Isolated", invert: false},
        post_processor: {
            type: "TemplateProcessing",
            single: [pad, {Sequence: {id: "A", type_id: 0}}, pad],
            pair: [pad, {Sequence: {id: "A", type_id: 0}}, pad, {Sequence: {id: "B", type_id: 0}}, pad],
            special_tokens: {"$": {id: "$", ids: [0], tokens: ["$"]}}
        },
        decoder: null,
        model: {vocab: kokoroVocabulary}
    };
}
