import fs from "node:fs";
import path from "node:path";
import { seededRandom } from "../seededRandom.js";
import { byteCharacters, byteLevelTokenizerJson } from "./byteLevelTokenizer.js";
import { encodeModel, float, int64, node, tensor, valueInfo } from "./onnxGraphBuilder.js";
import { smolVlmSizedNetworks, type SmolVlmShape } from "./smolVlmSizedNetworks.js";

export type TestSmolVlmOptions = {
    seed?: number;
    /** Hidden size of the embeddings and the decoder state. */
    hidden?: number;
    /** Image tokens per image (processor_config `image_seq_len`; SmolVLM-256M has 64). */
    imageSeqLen?: number;
    /** The processor's square tile (`max_image_size.longest_edge`, also `size.longest_edge`: no splitting). */
    imageSize?: number;
    /** Never ends its answer (<end_of_utterance> impossible) and has a context of a million positions: a generation only a cancel stops. */
    endless?: boolean;
    /**
     * A real model's size instead of the tiny graphs (`smolVlm256mShape`, for `npm run bench:vision`): its networks'
     * matrix products at full size (smolVlmSizedNetworks.ts), 64 image tokens per 512 px tile, answers that run to
     * `max_tokens`. Hundreds of MB of random weights: written to a git-ignored cache, never to test/.models.
     */
    shape?: SmolVlmShape;
};

/**
 * A chat template in the shape of SmolVLM-Instruct's (written from its published form, not vendored: check it against
 * the repository's `chat_template` before relying on its exact text): `User:` / `Assistant:` turns ending with
 * `<end_of_utterance>`, an image part written as `<image>` where it stands.
 */
export const smolVlmStyleTemplate = "<|im_start|>{% for message in messages %}{{message['role'] | capitalize}}"
    + "{% if message['content'][0]['type'] == 'image' %}{{':'}}{% else %}{{': '}}{% endif %}"
    + "{% for line in message['content'] %}{% if line['type'] == 'text' %}{{line['text']}}{% elif line['type'] == 'image' %}{{ '<image>' }}{% endif %}{% endfor %}"
    + "<end_of_utterance>\n{% endfor %}{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}";

/**
 * Writes a tiny random-weight model folder in the layout transformers.js loads for SmolVLM / Idefics3
 * (`AutoModelForImageTextToText`: MODEL_TYPES.ImageTextToText's sessions) with its processor (`AutoProcessor` ->
 * Idefics3Processor, image splitting off):
 * - `onnx/vision_encoder.onnx`: pixel_values [b, tiles, 3, H, W] -> image_features [b * tiles, imageSeqLen, hidden]
 *   (each tile's mean colour projected, so a different image gives different features);
 * - `onnx/embed_tokens.onnx`: input_ids [b, s] -> inputs_embeds [b, s, hidden];
 * - `onnx/decoder_model_merged.onnx`: inputs_embeds, attention_mask, position_ids and one layer's past key values
 *   -> logits and present key values (the logits depend on the current embedding and the mean of every embedding so
 *   far, kept in the key cache, so the image features and the prompt change the text);
 * - config.json (`model_type: "smolvlm"`, a llama `text_config`), generation_config.json, preprocessor_config.json,
 *   processor_config.json (`image_seq_len`), a byte-level BPE tokenizer.json with SmolVLM's special tokens and a
 *   tokenizer_config.json with the chat template.
 */
export function makeTestSmolVlmOnnx(folder: string, options: TestSmolVlmOptions = {}) {
    const shape = options.shape;
    const hidden = shape?.hidden ?? options.hidden ?? 16;
    const imageSeqLen = shape != null ? (shape.tile / shape.patch / shape.scaleFactor) ** 2 : options.imageSeqLen ?? 4;
    const imageSize = shape?.tile ?? options.imageSize ?? 32;
    const random = seededRandom(options.seed ?? 5);
    const weights = (length: number, scale: number) => Float32Array.from({length}, () => (random() * 2 - 1) * scale);

    const specials = ["<|endoftext|>", "<|im_start|>", "<end_of_utterance>", "<fake_token_around_image>", "<image>", "<global-img>"];
    const tokens = [...byteCharacters, ...specials];
    const id = (token: string) => tokens.indexOf(token);
    const vocabSize = tokens.length;

    const vision = encodeModel({
        name: "test-smolvlm-vision-encoder",
        initializer: [
            tensor("colour_projection", [3, imageSeqLen * hidden], weights(3 * imageSeqLen * hidden, 12)),
            tensor("flat_shape", [2], BigInt64Array.of(-1n, 3n)),
            tensor("features_shape", [3], BigInt64Array.of(-1n, BigInt(imageSeqLen), BigInt(hidden)))
        ],
        node: [
            node("ReduceMean", ["pixel_values"], ["tile_colours"], [{name: "axes", ints: [3, 4]}, {name: "keepdims", i: 0}]),
            node("Reshape", ["tile_colours", "flat_shape"], ["colours"]),
            node("MatMul", ["colours", "colour_projection"], ["projected"]),
            node("Reshape", ["projected", "features_shape"], ["image_features"])
        ],
        input: [valueInfo(float, "pixel_values", ["batch_size", "num_images", 3, "height", "width"])],
        output: [valueInfo(float, "image_features", ["batch_size_times_num_images", imageSeqLen, hidden])]
    });

    const embed = encodeModel({
        name: "test-smolvlm-embed-tokens",
        initializer: [tensor("token_embeddings", [vocabSize, hidden], weights(vocabSize * hidden, 1))],
        node: [node("Gather", ["token_embeddings", "input_ids"], ["inputs_embeds"], [{name: "axis", i: 0}])],
        input: [valueInfo(int64, "input_ids", ["batch_size", "sequence_length"])],
        output: [valueInfo(float, "inputs_embeds", ["batch_size", "sequence_length", hidden])]
    });

    const decoder = encodeModel({
        name: "test-smolvlm-decoder",
        initializer: [
            tensor("output_projection", [hidden, vocabSize], weights(hidden * vocabSize, 3)),
            // Bytes other than lower-case letters, space and full stop, and the special tokens but <end_of_utterance>, are
            // pushed down, so the random text is readable and ends now and then.
            tensor("output_bias", [vocabSize], Float32Array.from(tokens, (token, index) =>
                index < 256 ? (/^[a-z.Ġ]$/u.test(token) ? 0 : -8) : token === "<end_of_utterance>" ? (options.endless === true ? -1000 : -2) : -20)),
            tensor("head_axis", [1], BigInt64Array.of(1n))
        ],
        node: [
            node("Unsqueeze", ["inputs_embeds", "head_axis"], ["new_keys"]),
            node("Concat", ["past_key_values.0.key", "new_keys"], ["present.0.key"], [{name: "axis", i: 2}]),
            node("Concat", ["past_key_values.0.value", "new_keys"], ["present.0.value"], [{name: "axis", i: 2}]),
            node("ReduceMean", ["present.0.key"], ["history_flat"], [{name: "axes", ints: [1, 2]}, {name: "keepdims", i: 0}]),
            node("Unsqueeze", ["history_flat", "head_axis"], ["history"]),
            node("Add", ["inputs_embeds", "history"], ["contextual"]),
            node("Tanh", ["contextual"], ["state"]),
            node("MatMul", ["state", "output_projection"], ["projected_logits"]),
            node("Add", ["projected_logits", "output_bias"], ["logits"])
        ],
        input: [
            valueInfo(float, "inputs_embeds", ["batch_size", "sequence_length", hidden]),
            valueInfo(int64, "attention_mask", ["batch_size", "total_sequence_length"]),
            valueInfo(int64, "position_ids", ["batch_size", "sequence_length"]),
            valueInfo(float, "past_key_values.0.key", ["batch_size", 1, "past_sequence_length", hidden]),
            valueInfo(float, "past_key_values.0.value", ["batch_size", 1, "past_sequence_length", hidden])
        ],
        output: [
            valueInfo(float, "logits", ["batch_size", "sequence_length", vocabSize]),
            valueInfo(float, "present.0.key", ["batch_size", 1, "total_sequence_length", hidden]),
            valueInfo(float, "present.0.value", ["batch_size", 1, "total_sequence_length", hidden])
        ]
    });

    const networks = shape != null ? smolVlmSizedNetworks(shape, vocabSize, id("<end_of_utterance>"), random) : {vision, embed, decoder};
    fs.mkdirSync(path.join(folder, "onnx"), {recursive: true});
    fs.writeFileSync(path.join(folder, "onnx", "vision_encoder.onnx"), networks.vision);
    fs.writeFileSync(path.join(folder, "onnx", "embed_tokens.onnx"), networks.embed);
    fs.writeFileSync(path.join(folder, "onnx", "decoder_model_merged.onnx"), networks.decoder);
    const endOfText = id("<|endoftext|>");
    const endOfUtterance = id("<end_of_utterance>");
    const json = (name: string, value: unknown) => fs.writeFileSync(path.join(folder, name), JSON.stringify(value, null, 2));
    json("config.json", {
        model_type: "smolvlm", architectures: ["SmolVLMForConditionalGeneration"], image_token_id: id("<image>"), scale_factor: shape?.scaleFactor ?? 1,
        text_config: {
            model_type: "llama", hidden_size: hidden, num_hidden_layers: shape?.layers ?? 1, num_attention_heads: shape?.heads ?? 1,
            num_key_value_heads: shape?.kvHeads ?? 1, head_dim: shape?.headDim ?? hidden, intermediate_size: shape?.mlp,
            vocab_size: shape?.vocab ?? vocabSize, max_position_embeddings: options.endless === true ? 1_000_000 : shape != null ? 8192 : 2048
        },
        vision_config: shape != null
            ? {model_type: "smolvlm_vision", hidden_size: shape.visionHidden, num_hidden_layers: shape.visionLayers, num_attention_heads: shape.visionHeads,
                intermediate_size: shape.visionMlp, image_size: shape.tile, patch_size: shape.patch}
            : {model_type: "smolvlm_vision", hidden_size: hidden, image_size: imageSize, patch_size: imageSize / 2},
        vocab_size: shape?.vocab ?? vocabSize, bos_token_id: id("<|im_start|>"), eos_token_id: endOfUtterance, pad_token_id: endOfText
    });
    json("generation_config.json", {bos_token_id: id("<|im_start|>"), eos_token_id: [endOfUtterance, endOfText], pad_token_id: endOfText});
    json("preprocessor_config.json", {
        image_processor_type: "Idefics3ImageProcessor", processor_class: "Idefics3Processor",
        do_convert_rgb: true, do_resize: true, size: {longest_edge: imageSize}, max_image_size: {longest_edge: imageSize}, resample: 1,
        do_image_splitting: false, do_rescale: true, rescale_factor: 1 / 255, do_normalize: true,
        image_mean: [0.5, 0.5, 0.5], image_std: [0.5, 0.5, 0.5], do_pad: true
    });
    json("processor_config.json", {image_seq_len: imageSeqLen, processor_class: "Idefics3Processor"});
    json("tokenizer_config.json", {
        tokenizer_class: "GPT2Tokenizer", bos_token: "<|im_start|>", eos_token: "<end_of_utterance>", unk_token: "<|endoftext|>",
        pad_token: "<|endoftext|>", model_max_length: 2048, add_prefix_space: false, chat_template: smolVlmStyleTemplate
    });
    fs.writeFileSync(path.join(folder, "tokenizer.json"), byteLevelTokenizerJson(specials.map((content) => ({id: id(content), content}))));
}
