import fs from "node:fs";
import path from "node:path";
import { seededRandom } from "../seededRandom.js";
import { encodeModel, float, int64, node, tensor, valueInfo } from "./onnxGraphBuilder.js";

export type TestVitsOptions = {
    seed?: number;
    /** Output samples per input token (blanks included). */
    samplesPerToken?: number;
};

/** Character vocabulary of the test MMS-style tokenizer; "_" (0) is the blank put between characters. */
const characters = ["_", " ", "'", "-", ..."abcdefghijklmnopqrstuvwxyz0123456789"];

/**
 * Writes a tiny random-weight model folder shaped like an MMS-TTS (VITS) export for transformers.js
 * (Xenova/mms-tts-*): `config.json` (model_type "vits", sampling_rate 16000), a character
 * `tokenizer.json` as transformers.js's converter writes it (lower case, unknown characters dropped,
 * a blank between characters and at both ends), `tokenizer_config.json` (VitsTokenizer) and
 * `onnx/model.onnx`: `input_ids` and `attention_mask` int64 [1, n] -> `waveform` float [1, n * samplesPerToken],
 * each token's embedding through tanh (x 0.5), masked.
 */
export function makeTestVitsOnnx(folder: string, options: TestVitsOptions = {}) {
    const frame = options.samplesPerToken ?? 256;
    const random = seededRandom(options.seed ?? 2);
    const embeddings = Float32Array.from({length: characters.length * frame}, () => (random() * 2 - 1) * 1.5);
    const model = encodeModel({
        name: "test-vits",
        initializer: [
            tensor("embeddings", [characters.length, frame], embeddings),
            tensor("half", [], Float32Array.of(0.5)),
            tensor("last_axis", [1], BigInt64Array.of(2n)),
            tensor("flat_shape", [2], BigInt64Array.of(1n, -1n))
        ],
        node: [
            node("Gather", ["embeddings", "input_ids"], ["embedded"], [{name: "axis", i: 0}]),
            node("Tanh", ["embedded"], ["activated"]),
            node("Mul", ["activated", "half"], ["frames"]),
            node("Cast", ["attention_mask"], ["mask_float"], [{name: "to", i: float}]),
            node("Unsqueeze", ["mask_float", "last_axis"], ["mask"]),
            node("Mul", ["frames", "mask"], ["masked"]),
            node("Reshape", ["masked", "flat_shape"], ["waveform"])
        ],
        input: [valueInfo(int64, "input_ids", [1, "sequence_length"]), valueInfo(int64, "attention_mask", [1, "sequence_length"])],
        output: [valueInfo(float, "waveform", [1, "num_samples"])]
    });
    fs.mkdirSync(path.join(folder, "onnx"), {recursive: true});
    fs.writeFileSync(path.join(folder, "onnx", "model.onnx"), model);
    fs.writeFileSync(path.join(folder, "config.json"), JSON.stringify({
        model_type: "vits", architectures: ["VitsModel"], sampling_rate: 16000, vocab_size: characters.length, pad_token_id: 0
    }, null, 2));
    fs.writeFileSync(path.join(folder, "tokenizer_config.json"), JSON.stringify({
        tokenizer_class: "VitsTokenizer", add_blank: true, normalize: true, phonemize: false, is_uroman: false,
        language: "eng", pad_token: "_", unk_token: "<unk>"
    }, null, 2));
    const vocabulary = Object.fromEntries(characters.map((character, index) => [character, index]));
    const escaped = characters.join("").replace(/[\\\]^-]/gu, (character) => `\\${character}`);
    fs.writeFileSync(path.join(folder, "tokenizer.json"), JSON.stringify({
        version: "1.0",
        truncation: null,
        padding: null,
        added_tokens: [],
        normalizer: {
            type: "Sequence",
            normalizers: [
                {type: "Lowercase"},
                {type: "Replace", pattern: {Regex: `[^${escaped}]`}, content: ""},
                {type: "Strip", strip_left: true, strip_right: true},
                {type: "Replace", pattern: {Regex: "(?=.)|(?<!^)$"}, content: "_"}
            ]
        },
        pre_tokenizer: {type: "Split", pattern: {Regex: ""}, behavior: "Isolated", invert: false},
        post_processor: null,
        decoder: null,
        model: {vocab: vocabulary}
    }));
}
