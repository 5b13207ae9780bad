import fs from "node:fs";
import path from "node:path";
import onnxProto from "onnx-proto";
import { seededRandom } from "../seededRandom.js";

const {onnx} = onnxProto;

export type TestBertOptions = {
    seed?: number;
    hiddenSize?: number;
    /** The model's own input limit (config.json `max_position_embeddings`, tokenizer `model_max_length`). */
    maxPositions?: number;
    /**
     * A cross-encoder (`BertForSequenceClassification`, one label): the masked mean of the hidden states through a
     * linear head, output `logits` [batch, 1] instead of `last_hidden_state`. Token types (query 0, document 1) have
     * their own embeddings, so a pair scores otherwise than its concatenation.
     */
    crossEncoder?: boolean;
};

const specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
const letters = "abcdefghijklmnopqrstuvwxyz0123456789".split("");
const punctuation = ".,!?'\"-:;()".split("");
const words = ["the", "a", "once", "upon", "time", "there", "was", "little", "girl", "boy", "cat", "dog", "hello", "world",
    "quick", "brown", "fox", "jumps", "over", "lazy", "red", "ball", "park", "play", "sun", "moon", "tree", "house"];

/** The WordPiece vocabulary of the test tokenizer: specials, whole words, single characters and `##` continuations. */
export function testBertVocabulary(): string[] {
    return [...specials, ...words, ...letters, ...punctuation, ...letters.map((letter) => "##" + letter)];
}

/**
 * Writes a tiny random-weight BERT-like encoder that transformers.js loads as a `bert` model:
 * `config.json`, `tokenizer.json` (WordPiece, BERT normaliser and pre-tokenizer, [CLS] ... [SEP]),
 * `tokenizer_config.json` and `onnx/model.onnx`. Graph: word + token-type embeddings (Gather),
 * a dense layer with tanh, masked by `attention_mask`; output `last_hidden_state` [batch, seq, hidden].
 * Each position depends only on its own token, so padding never changes a sequence's output.
 */
export function makeTestBertOnnx(folder: string, options: TestBertOptions = {}) {
    const hidden = options.hiddenSize ?? 32;
    const maxPositions = options.maxPositions ?? 64;
    const vocabulary = testBertVocabulary();
    const random = seededRandom(options.seed ?? 1);
    const floats = (count: number, scale: number) => Float32Array.from({length: count}, () => (random() * 2 - 1) * scale);

    const tensor = (name: string, dims: number[], data: Float32Array | BigInt64Array, dataType: number) => onnx.TensorProto.create({
        name, dims, dataType, rawData: new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
    });
    const float = onnx.TensorProto.DataType.FLOAT;
    const int64 = onnx.TensorProto.DataType.INT64;
    const dynamic = (elemType: number, name: string, dims: (string | number)[]) => onnx.ValueInfoProto.create({
        name,
        type: {tensorType: {elemType, shape: {dim: dims.map((dim) => typeof dim === "number" ? {dimValue: dim} : {dimParam: dim})}}}
    });
    const node = (opType: string, input: string[], output: string[], attribute: onnxProto.onnx.IAttributeProto[] = []) =>
        onnx.NodeProto.create({opType, input, output, name: output[0], attribute});

    const graph = onnx.GraphProto.create({
        name: "test-bert",
        initializer: [
            tensor("word_embeddings", [vocabulary.length, hidden], floats(vocabulary.length * hidden, 1), float),
            tensor("token_type_embeddings", [2, hidden], floats(2 * hidden, 0.1), float),
            tensor("dense_weight", [hidden, hidden], floats(hidden * hidden, 1 / Math.sqrt(hidden)), float),
            tensor("dense_bias", [hidden], floats(hidden, 0.1), float),
            tensor("last_axis", [1], BigInt64Array.of(-1n), int64)
        ],
        node: [
            node("Gather", ["word_embeddings", "input_ids"], ["words"], [{name: "axis", type: onnx.AttributeProto.AttributeType.INT, i: 0}]),
            node("Gather", ["token_type_embeddings", "token_type_ids"], ["types"], [{name: "axis", type: onnx.AttributeProto.AttributeType.INT, i: 0}]),
            node("Add", ["words", "types"], ["embedded"]),
            node("MatMul", ["embedded", "dense_weight"], ["projected"]),
            node("Add", ["projected", "dense_bias"], ["biased"]),
            node("Tanh", ["biased"], ["activated"]),
            node("Cast", ["attention_mask"], ["mask_float"], [{name: "to", type: onnx.AttributeProto.AttributeType.INT, i: float}]),
            node("Unsqueeze", ["mask_float", "last_axis"], ["mask"]),
            node("Mul", ["activated", "mask"], ["last_hidden_state"])
        ],
        input: ["input_ids", "attention_mask", "token_type_ids"].map((name) => dynamic(int64, name, ["batch_size", "sequence_length"])),
        output: [dynamic(float, "last_hidden_state", ["batch_size", "sequence_length", hidden])]
    });
    if (options.crossEncoder === true) {
        graph.initializer.push(
            tensor("classifier_weight", [hidden, 1], floats(hidden, 3 / Math.sqrt(hidden)), float),
            tensor("classifier_bias", [1], floats(1, 0.1), float),
            tensor("sequence_axis", [1], BigInt64Array.of(1n), int64));
        const keep = (value: number) => [{name: "keepdims", type: onnx.AttributeProto.AttributeType.INT, i: value}];
        graph.node.push(
            node("ReduceSum", ["last_hidden_state", "sequence_axis"], ["summed"], keep(0)),
            node("ReduceSum", ["mask", "sequence_axis"], ["counted"], keep(0)),
            node("Div", ["summed", "counted"], ["pooled"]),
            node("MatMul", ["pooled", "classifier_weight"], ["scaled"]),
            node("Add", ["scaled", "classifier_bias"], ["logits"]));
        graph.output = [dynamic(float, "logits", ["batch_size", 1])];
    }
    const model = onnx.ModelProto.create({
        irVersion: 7,
        producerName: "local-openai-server tests",
        opsetImport: [{domain: "", version: 13}],
        graph
    });

    fs.mkdirSync(path.join(folder, "onnx"), {recursive: true});
    fs.writeFileSync(path.join(folder, "onnx", "model.onnx"), onnx.ModelProto.encode(model).finish());
    fs.writeFileSync(path.join(folder, "config.json"), JSON.stringify({
        model_type: "bert", architectures: [options.crossEncoder === true ? "BertForSequenceClassification" : "BertModel"],
        ...(options.crossEncoder === true ? {id2label: {0: "LABEL_0"}, label2id: {LABEL_0: 0}} : {}), hidden_size: hidden, vocab_size: vocabulary.length,
        max_position_embeddings: maxPositions, num_attention_heads: 1, num_hidden_layers: 1, type_vocab_size: 2, pad_token_id: 0
    }, null, 2));
    fs.writeFileSync(path.join(folder, "tokenizer_config.json"), JSON.stringify({
        tokenizer_class: "BertTokenizer", do_lower_case: true, model_max_length: maxPositions, clean_up_tokenization_spaces: true,
        cls_token: "[CLS]", sep_token: "[SEP]", pad_token: "[PAD]", unk_token: "[UNK]", mask_token: "[MASK]"
    }, null, 2));
    fs.writeFileSync(path.join(folder, "tokenizer.json"), JSON.stringify(tokenizerJson(vocabulary)));
}

function tokenizerJson(vocabulary: string[]) {
    const id = (token: string) => vocabulary.indexOf(token);
    const special = (token: string) => ({SpecialToken: {id: token, type_id: 0}});
    return {
        version: "1.0",
        truncation: null,
        padding: null,
        added_tokens: specials.map((content) => ({id: id(content), content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true})),
        normalizer: {type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true},
        pre_tokenizer: {type: "BertPreTokenizer"},
        post_processor: {
            type: "TemplateProcessing",
            single: [special("[CLS]"), {Sequence: {id: "A", type_id: 0}}, special("[SEP]")],
            pair: [special("[CLS]"), {Sequence: {id: "A", type_id: 0}}, special("[SEP]"), {Sequence: {id: "B", type_id: 1}}, {SpecialToken: {id: "[SEP]", type_id: 1}}],
            special_tokens: Object.fromEntries(["[CLS]", "[SEP]"].map((token) => [token, {id: token, ids: [id(token)], tokens: [token]}]))
        },
        decoder: {type: "WordPiece", prefix: "##", cleanup: true},
        model: {
            type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", max_input_chars_per_word: 100,
            vocab: Object.fromEntries(vocabulary.map((token, index) => [token, index]))
        }
    };
}
