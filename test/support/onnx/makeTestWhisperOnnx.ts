import fs from "node:fs";
import path from "node:path";
import { seededRandom } from "../seededRandom.js";
import { byteCharacters, byteLevelTokenizerJson } from "./byteLevelTokenizer.js";
import { encodeModel, float, int64, node, tensor, valueInfo } from "./onnxGraphBuilder.js";

export type TestWhisperOptions = {
    seed?: number;
    /** Hidden size (16 = tiny; 512 with `layers` 6 is about whisper-base's width for the bench). */
    hidden?: number;
    /** Extra blocks in encoder and decoder of a Whisper layer's size (compute only, to make a larger model). */
    layers?: number;
    /** Logits beyond the tokenizer's tokens, never chosen (whisper-base has 51865). */
    logits?: number;
    /** The decoder's context (config max_target_positions; 448 in every Whisper): half of it is the tokens a window may generate. */
    maxTargetPositions?: number;
    /** Whether the model knows several languages and the translate task (false = like whisper-*.en). */
    multilingual?: boolean;
    /**
     * A `cross_attentions.0` output (softmax over the encoder positions of each token's projection against them) and
     * `alignment_heads` [[0, 0]], as onnx-community's `*_timestamped` exports, so words can be timed. Default true.
     */
    crossAttentions?: boolean;
    /** Scale of the output projection: larger = surer of each token (greedy text Whisper's fallback accepts). Default 3. */
    outputScale?: number;
    /**
     * Added to `<|nospeech|>`'s logit where the input token is `<|startoftranscript|>` (the position OpenAI reads the
     * no-speech probability at; the token is in `suppress_tokens`, as in Whisper's configs, so it is never generated): a silent-sounding model.
     */
    noSpeechBias?: number;
    /** Added to the space's logit where the input token is a lower-case letter: text of short words ("a xu ax"). Default 0. */
    spaceAfterLetter?: number;
};

const languages = ["en", "de", "fr", "es"];
/**
 * Writes a tiny random-weight model folder shaped like a transformers.js Whisper export
 * (onnx-community/whisper-*): `onnx/encoder_model.onnx` (input_features [b, 80, 3000] -> last_hidden_state
 * [b, 1500, hidden]: every second frame, a projection and tanh) and `onnx/decoder_model_merged.onnx`
 * (input_ids, encoder_hidden_states and the past key values of one layer -> logits and present key
 * values; the logits depend on the last token, the mean of all tokens so far (kept in the decoder key cache)
 * and the mean of the encoder states, so different audio or a different prompt gives different text), config.json, generation_config.json (language and task tokens, timestamp tokens),
 * preprocessor_config.json (80 mel bins, 30 s) and a byte-level BPE tokenizer.json with Whisper's special
 * tokens: the 256 byte tokens, <|endoftext|> (256), <|startoftranscript|>, languages, <|translate|>,
 * <|transcribe|>, <|startoflm|>, <|startofprev|>, <|nospeech|>, <|notimestamps|>, then <|0.00|>..<|30.00|>.
 */
export function makeTestWhisperOnnx(folder: string, options: TestWhisperOptions = {}) {
    const hidden = options.hidden ?? 16;
    const layers = options.layers ?? 0;
    const multilingual = options.multilingual ?? true;
    const crossAttentions = options.crossAttentions ?? true;
    const noSpeechBias = options.noSpeechBias ?? 0;
    const random = seededRandom(options.seed ?? 3);
    const weights = (length: number, scale: number) => Float32Array.from({length}, () => (random() * 2 - 1) * scale);

    const specials = ["<|endoftext|>", "<|startoftranscript|>", ...(multilingual ? languages.map((code) => `<|${code}|>`) : []),
        "<|translate|>", "<|transcribe|>", "<|startoflm|>", "<|startofprev|>", "<|nospeech|>", "<|notimestamps|>"];
    const timestamps = Array.from({length: 1501}, (_, index) => `<|${(index * 0.02).toFixed(2)}|>`);
    const tokens = [...byteCharacters, ...specials, ...timestamps];
    const id = (token: string) => tokens.indexOf(token);
    const vocabSize = Math.max(tokens.length, options.logits ?? 0);
    const inputBiases: {when: (token: number) => boolean, token: number, bias: number}[] = [
        ...(noSpeechBias !== 0 ? [{when: (token: number) => token === id("<|startoftranscript|>"), token: id("<|nospeech|>"), bias: noSpeechBias}] : []),
        ...(options.spaceAfterLetter ? [{when: (token: number) => /^[a-z]$/u.test(tokens[token] ?? ""), token: id("Ġ"), bias: options.spaceAfterLetter}] : [])
    ];

    /**
     * `layers` blocks of about a Whisper layer's weights and multiply-adds (12 hidden^2: four hidden x hidden
     * projections where attention has its q, k, v and output, then a 4x feed-forward), without attention's mixing.
     */
    const hiddenLayers = (prefix: string, input: string) => {
        const initializer: ReturnType<typeof tensor>[] = [];
        const nodes: ReturnType<typeof node>[] = [];
        let current = input;
        const dense = (name: string, rows: number, columns: number) => {
            initializer.push(tensor(name, [rows, columns], weights(rows * columns, 1 / Math.sqrt(rows))));
            nodes.push(node("MatMul", [current, name], [`${name}_out`]), node("Tanh", [`${name}_out`], [`${name}_act`]));
            current = `${name}_act`;
        };
        for (let layer = 0; layer < layers; layer++) {
            for (const projection of ["q", "k", "v", "o"])
                dense(`${prefix}${layer}_${projection}`, hidden, hidden);
            dense(`${prefix}${layer}_up`, hidden, 4 * hidden);
            dense(`${prefix}${layer}_down`, 4 * hidden, hidden);
        }
        return {initializer, nodes, output: current};
    };

    const encoderLayers = hiddenLayers("enc", "projected");
    const encoder = encodeModel({
        name: "test-whisper-encoder",
        initializer: [
            tensor("mel_projection", [80, hidden], weights(80 * hidden, 0.5)),
            tensor("starts", [1], BigInt64Array.of(0n)), tensor("ends", [1], BigInt64Array.of(3000n)),
            tensor("axes", [1], BigInt64Array.of(1n)), tensor("steps", [1], BigInt64Array.of(2n)),
            ...encoderLayers.initializer
        ],
        node: [
            node("Transpose", ["input_features"], ["frames"], [{name: "perm", ints: [0, 2, 1]}]),
            node("Slice", ["frames", "starts", "ends", "axes", "steps"], ["halved"]),
            node("MatMul", ["halved", "mel_projection"], ["mixed"]),
            node("Tanh", ["mixed"], ["projected"]),
            ...encoderLayers.nodes,
            node("Identity", [encoderLayers.output], ["last_hidden_state"])
        ],
        input: [valueInfo(float, "input_features", ["batch_size", 80, 3000])],
        output: [valueInfo(float, "last_hidden_state", ["batch_size", 1500, hidden])]
    });

    const decoderLayers = hiddenLayers("dec", "state");
    const past = (kind: string, part: string) => valueInfo(float, `past_key_values.0.${kind}.${part}`, ["batch_size", 1, `past_${kind}_sequence_length`, hidden]);
    const present = (kind: string, part: string) => valueInfo(float, `present.0.${kind}.${part}`, ["batch_size", 1, `present_${kind}_sequence_length`, hidden]);
    const decoder = encodeModel({
        name: "test-whisper-decoder",
        initializer: [
            tensor("token_embeddings", [vocabSize, hidden], weights(vocabSize * hidden, 1)),
            tensor("audio_projection", [hidden, hidden], weights(hidden * hidden, 1)),
            tensor("output_projection", [hidden, vocabSize], weights(hidden * vocabSize, options.outputScale ?? 3)),
            // Byte tokens other than lower-case letters, space and full stop, and the special tokens but <|endoftext|>, are
            // pushed down, so the random text is readable.
            tensor("output_bias", [vocabSize], Float32Array.from(Array.from({length: vocabSize}, (_, index) => tokens[index] ?? ""), (token, index) =>
                index >= tokens.length ? -100 : index < 256 ? (/^[a-z.Ġ]$/u.test(token) ? 0 : -8) : index === 256 ? -3 : index < 256 + specials.length ? -8
                    // Timestamps: early ones likelier, as in short speech.
                    : -7 - (index - 256 - specials.length) / 100)),
            tensor("head_axis", [1], BigInt64Array.of(1n)),
            ...decoderLayers.initializer,
            ...(crossAttentions ? [tensor("attention_query", [hidden, hidden], weights(hidden * hidden, 4))] : []),
            ...inputBiases.flatMap((rule, index) => [
                tensor(`bias_when_${index}`, [vocabSize], Float32Array.from({length: vocabSize}, (_, token) => rule.when(token) ? 1 : 0)),
                tensor(`bias_of_${index}`, [vocabSize], Float32Array.from({length: vocabSize}, (_, token) => token === rule.token ? rule.bias : 0))
            ]),
            tensor("last_axis", [1], BigInt64Array.of(-1n))
        ],
        node: [
            node("Gather", ["token_embeddings", "input_ids"], ["embedded"], [{name: "axis", i: 0}]),
            node("ReduceMean", ["encoder_hidden_states"], ["audio"], [{name: "axes", ints: [1]}, {name: "keepdims", i: 1}]),
            node("MatMul", ["audio", "audio_projection"], ["audio_mixed"]),
            // The running mean of every token so far (the decoder key cache), so the prompt, language and task tokens matter.
            node("Unsqueeze", ["embedded", "head_axis"], ["new_keys"]),
            node("Concat", ["past_key_values.0.decoder.key", "new_keys"], ["present.0.decoder.key"], [{name: "axis", i: 2}]),
            node("ReduceMean", ["present.0.decoder.key"], ["history_flat"], [{name: "axes", ints: [1, 2]}, {name: "keepdims", i: 0}]),
            node("Unsqueeze", ["history_flat", "head_axis"], ["history"]),
            node("Add", ["embedded", "history"], ["contextual"]),
            node("Add", ["contextual", "audio_mixed"], ["summed"]),
            node("Tanh", ["summed"], ["state"]),
            ...decoderLayers.nodes,
            node("MatMul", [decoderLayers.output, "output_projection"], ["projected_logits"]),
            // Each input bias: where the input token is one of its `when` tokens, its bias is added to its token's logit.
            node("Add", ["projected_logits", "output_bias"], [inputBiases.length === 0 ? "logits" : "biased_0"]),
            ...inputBiases.flatMap((_, index) => [
                node("Gather", [`bias_when_${index}`, "input_ids"], [`bias_applies_${index}`], [{name: "axis", i: 0}]),
                node("Unsqueeze", [`bias_applies_${index}`, "last_axis"], [`bias_column_${index}`]),
                node("Mul", [`bias_column_${index}`, `bias_of_${index}`], [`bias_push_${index}`]),
                node("Add", [`biased_${index}`, `bias_push_${index}`], [index === inputBiases.length - 1 ? "logits" : `biased_${index + 1}`])
            ]),
            ...(crossAttentions ? [
                node("MatMul", ["embedded", "attention_query"], ["queries"]),
                node("Transpose", ["encoder_hidden_states"], ["encoder_keys"], [{name: "perm", ints: [0, 2, 1]}]),
                node("MatMul", ["queries", "encoder_keys"], ["attention_scores"]),
                node("Softmax", ["attention_scores"], ["attention_weights"], [{name: "axis", i: -1}]),
                node("Unsqueeze", ["attention_weights", "head_axis"], ["cross_attentions.0"])
            ] : []),
            node("Concat", ["past_key_values.0.decoder.value", "new_keys"], ["present.0.decoder.value"], [{name: "axis", i: 2}]),
            node("Unsqueeze", ["encoder_hidden_states", "head_axis"], ["present.0.encoder.key"]),
            node("Unsqueeze", ["encoder_hidden_states", "head_axis"], ["present.0.encoder.value"])
        ],
        input: [
            valueInfo(int64, "input_ids", ["batch_size", "decoder_sequence_length"]),
            valueInfo(float, "encoder_hidden_states", ["batch_size", "encoder_sequence_length", hidden]),
            past("decoder", "key"), past("decoder", "value"), past("encoder", "key"), past("encoder", "value")
        ],
        output: [
            valueInfo(float, "logits", ["batch_size", "decoder_sequence_length", vocabSize]),
            present("decoder", "key"), present("decoder", "value"), present("encoder", "key"), present("encoder", "value"),
            ...(crossAttentions ? [valueInfo(float, "cross_attentions.0", ["batch_size", 1, "decoder_sequence_length", "encoder_sequence_length"])] : [])
        ]
    });

    fs.mkdirSync(path.join(folder, "onnx"), {recursive: true});
    fs.writeFileSync(path.join(folder, "onnx", "encoder_model.onnx"), encoder);
    fs.writeFileSync(path.join(folder, "onnx", "decoder_model_merged.onnx"), decoder);
    const endOfText = id("<|endoftext|>");
    const startOfTranscript = id("<|startoftranscript|>");
    const maxTargetPositions = options.maxTargetPositions ?? 64;
    fs.writeFileSync(path.join(folder, "config.json"), JSON.stringify({
        model_type: "whisper", architectures: ["WhisperForConditionalGeneration"], is_encoder_decoder: true,
        d_model: hidden, encoder_layers: 1, decoder_layers: 1, encoder_attention_heads: 1, decoder_attention_heads: 1,
        num_mel_bins: 80, max_source_positions: 1500, median_filter_width: 7, max_target_positions: maxTargetPositions, vocab_size: vocabSize,
        decoder_start_token_id: startOfTranscript, eos_token_id: endOfText, bos_token_id: endOfText, pad_token_id: endOfText
    }, null, 2));
    fs.writeFileSync(path.join(folder, "generation_config.json"), JSON.stringify({
        decoder_start_token_id: startOfTranscript, eos_token_id: endOfText, bos_token_id: endOfText, pad_token_id: endOfText,
        no_timestamps_token_id: id("<|notimestamps|>"), max_initial_timestamp_index: 50, max_length: maxTargetPositions,
        is_multilingual: multilingual,
        ...(multilingual ? {
            lang_to_id: Object.fromEntries(languages.map((code) => [`<|${code}|>`, id(`<|${code}|>`)])),
            task_to_id: {translate: id("<|translate|>"), transcribe: id("<|transcribe|>")}
        } : {}),
        begin_suppress_tokens: [id("Ġ"), endOfText], suppress_tokens: [id("<|nospeech|>")],
        ...(crossAttentions ? {alignment_heads: [[0, 0]]} : {})
    }, null, 2));
    fs.writeFileSync(path.join(folder, "preprocessor_config.json"), JSON.stringify({
        feature_extractor_type: "WhisperFeatureExtractor", processor_class: "WhisperProcessor", feature_size: 80, sampling_rate: 16000,
        hop_length: 160, chunk_length: 30, n_fft: 400, n_samples: 480000, nb_max_frames: 3000, padding_side: "right", padding_value: 0,
        return_attention_mask: false
    }, null, 2));
    fs.writeFileSync(path.join(folder, "tokenizer_config.json"), JSON.stringify({
        tokenizer_class: "WhisperTokenizer", bos_token: "<|endoftext|>", eos_token: "<|endoftext|>", unk_token: "<|endoftext|>",
        pad_token: "<|endoftext|>", model_max_length: 1024, add_prefix_space: false, errors: "replace"
    }, null, 2));
    fs.writeFileSync(path.join(folder, "tokenizer.json"), byteLevelTokenizerJson([...specials, ...timestamps].map((content) => ({id: id(content), content}))));
}
